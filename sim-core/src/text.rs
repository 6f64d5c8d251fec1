//! Text helpers for messages: how close a misspelled name is to a known one.

/// Levenshtein distance over chars (for "did you mean" suggestions).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (k, &cb) in b.iter().enumerate() {
            let cur = row[k + 1];
            row[k + 1] = (prev + usize::from(ca != cb)).min(row[k] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn edit_distance_counts_single_char_edits() {
        assert_eq!(edit_distance("train-w-0", "train-w-0"), 0);
        assert_eq!(edit_distance("train-w-0", "trian-w-0"), 2);
        assert_eq!(edit_distance("train-w-0", "train-w-10"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
