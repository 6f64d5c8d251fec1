//! How outputs name a job and a pod (`namespace/name`, `namespace/name-task-index`).

/// A job's name in the outputs: `namespace/name`, just `name` in the default
/// namespace (jobs.csv, pods.csv and decisions.csv agree).
pub fn job_label(s: &lahar_core::model::job::JobSpec) -> String {
    let mut out = String::new();
    push_job_label(&mut out, s);
    out
}

/// Appends [`job_label`] to `out`.
pub fn push_job_label(out: &mut String, s: &lahar_core::model::job::JobSpec) {
    s.push_label(out);
}

/// A pod's name in the outputs: always `namespace/name`, the name being
/// `<job>-<task>-<index>` (pods.csv, decisions.csv and explain.csv agree).
pub fn pod_label(s: &lahar_core::model::job::JobSpec, task: u16, index: u32) -> String {
    let mut out = String::new();
    push_pod_label(&mut out, s, task, index);
    out
}

/// Appends [`pod_label`] to `out`.
pub fn push_pod_label(out: &mut String, s: &lahar_core::model::job::JobSpec, task: u16, index: u32) {
    out.push_str(&s.namespace);
    out.push('/');
    s.push_pod_name(out, task as usize, index);
}
