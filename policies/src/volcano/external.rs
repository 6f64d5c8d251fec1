//! Plugins registered while the process runs, beside the built-in ones of
//! [`super::plugins::ALL`]: the Python package's `lahar.register_plugin` puts a
//! Python class here by name, and a volcano-scheduler.conf then names it like a
//! built-in plugin. This is Volcano's own design (`RegisterPluginBuilder`, a
//! process-wide map of plugin builders by name).
//!
//! A conf entry naming a registered plugin keeps its registration
//! ([`super::plugin::PluginConf::external`]), so a run builds the plugin the conf was checked
//! against even if the name is registered again meanwhile. Its `arguments` are
//! handed to the builder as written: the plugin checks them.

pub use super::plugin::{Build, External};
use std::sync::{Arc, Mutex, MutexGuard};

/// The panic payload a registered plugin raises when it cannot go on and no
/// caller waits for its error (a sweep's cell: the cell fails with this text).
#[derive(Debug)]
pub struct PluginFailure(pub String);

struct Registry {
    /// Registered plugins, sorted by name.
    plugins: Vec<Arc<External>>,
    /// Every name ever registered (leaked once each: `Plugin::name` is static).
    names: Vec<&'static str>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { plugins: Vec::new(), names: Vec::new() });

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Registers `build` as plugin `name`, replacing an earlier registration of that
/// name. A built-in plugin's name, a Volcano plugin lahar lists as not modelled,
/// and names that are empty or hold whitespace or control characters are refused.
pub fn register(name: &str, build: Box<Build>) -> Result<&'static str, String> {
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("plugin name {name:?}: expected a non-empty name without spaces"));
    }
    if super::plugins::spec(name).is_some() {
        return Err(format!("plugin `{name}` is built in; register yours under another name"));
    }
    if super::plugins::VOLCANO_ONLY.iter().any(|(n, _)| *n == name) {
        return Err(format!("plugin `{name}` is one of Volcano's; register yours under another name"));
    }
    let mut r = registry();
    let interned = match r.names.iter().find(|n| **n == name) {
        Some(n) => *n,
        None => {
            let n: &'static str = Box::leak(name.to_string().into_boxed_str());
            r.names.push(n);
            n
        }
    };
    let ext = Arc::new(External { name: interned, build });
    match r.plugins.binary_search_by(|p| p.name.cmp(interned)) {
        Ok(i) => r.plugins[i] = ext,
        Err(i) => r.plugins.insert(i, ext),
    }
    Ok(interned)
}

/// Removes plugin `name`; false if it was not registered. Confs checked before
/// keep their registration.
pub fn unregister(name: &str) -> bool {
    let mut r = registry();
    match r.plugins.binary_search_by(|p| p.name.cmp(name)) {
        Ok(i) => {
            r.plugins.remove(i);
            true
        }
        Err(_) => false,
    }
}

/// The registration of `name`.
pub fn find(name: &str) -> Option<Arc<External>> {
    let r = registry();
    r.plugins.binary_search_by(|p| p.name.cmp(name)).ok().map(|i| Arc::clone(&r.plugins[i]))
}

/// The registered names, sorted.
pub fn names() -> Vec<&'static str> {
    registry().plugins.iter().map(|p| p.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volcano::plugin::{Hooks, Plugin};

    struct Nothing(&'static str);
    impl Plugin for Nothing {
        fn name(&self) -> &'static str {
            self.0
        }
        fn hooks(&self) -> Hooks {
            Hooks::NONE
        }
    }

    #[test]
    fn a_registered_plugin_is_found_by_name_and_a_conf_keeps_its_registration() {
        let name = register("test-nothing", Box::new(|_| Box::new(Nothing("test-nothing")))).unwrap();
        assert_eq!(name, "test-nothing");
        let conf = crate::volcano::conf::parse(
            "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: test-nothing\n    enableNodeOrder: false\n    arguments:\n      anything.goes: [1, 2]\n",
        )
        .unwrap();
        let pc = &conf.tiers[0][1];
        assert_eq!(pc.name, "test-nothing");
        assert!(!pc.flag("enableNodeOrder"));
        assert!(pc.args.0.contains_key("anything.goes"));
        let first = pc.external.clone().unwrap();
        // Registered again: the checked conf keeps the first builder.
        let again = register("test-nothing", Box::new(|_| Box::new(Nothing("test-nothing")))).unwrap();
        assert!(std::ptr::eq(name, again), "a name is interned once");
        assert!(!Arc::ptr_eq(&first, &find("test-nothing").unwrap()));
        assert_eq!(conf.tiers[0][1].external.as_deref(), Some(&*first));
        let _ = crate::volcano::framework::Framework::new(&conf);
        assert!(unregister("test-nothing"));
        assert!(!unregister("test-nothing"));
        let e = crate::volcano::conf::parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: test-nothing\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown plugin `test-nothing`"), "{e}");
    }

    #[test]
    fn built_in_and_malformed_names_are_refused() {
        let b = || -> Box<Build> { Box::new(|_| Box::new(Nothing("x"))) };
        assert!(register("binpack", b()).unwrap_err().contains("built in"));
        assert!(register("resourcequota", b()).unwrap_err().contains("Volcano"));
        assert!(register("", b()).is_err());
        assert!(register("two words", b()).is_err());
        assert!(find("binpack").is_none());
    }
}
