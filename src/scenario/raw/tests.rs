//! Unit tests of `raw.rs`: the choice lists are the schema's.

use super::*;

/// Each list is the schema's: every name deserializes, and a word not in it does not.
#[test]
fn choices_are_the_words_the_loader_accepts() {
    assert_eq!(
        choices("class.request.retry.backoff"),
        Some(&["none", "constant", "exponential"][..])
    );
    assert_eq!(
        choices("pool.api.calls.0.retry.jitter"),
        Some(&["none", "full", "equal", "decorrelated"][..])
    );
    assert_eq!(
        choices("pool.db.slowdown.with"),
        Some(&["queue", "in_flight"][..])
    );
    assert_eq!(choices("pool.db.with"), None);
    assert_eq!(choices("pool.db.workers"), None);
    for name in choices("pool.db.discipline").unwrap() {
        let v = Value::String(name.to_string());
        assert!(Discipline::deserialize(v).is_ok(), "{name}");
    }
    for name in choices("pool.db.balance").unwrap() {
        assert!(
            Balance::deserialize(Value::String(name.to_string())).is_ok(),
            "{name}"
        );
    }
    assert!(Discipline::deserialize(Value::String("stack".into())).is_err());
}
