//! One test per row of the compatibility table (docs/formats/icarec.md, "Compatibility").

#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use recfmt_icarec::{
    CompatReport, IssueCode, Lifecycle, SchemaBuilder, SchemaDoc, Severity, SignalSpec, SignalType,
    validate_against,
};
use serde_json::json;

fn schema(version: &str, signals: &[SignalSpec]) -> SchemaDoc {
    let mut b = SchemaBuilder::new(version, "1.5.0", "2026-02-16T12:00:00Z").unwrap();
    for s in signals {
        b = b.spec(s.clone());
    }
    b.build().unwrap().into_doc()
}

fn dynamic(name: &str, ty: SignalType) -> SignalSpec {
    SignalSpec::new(name, &ty, Lifecycle::Dynamic).with_units("m")
}

fn base() -> Vec<SignalSpec> {
    vec![
        dynamic("Vehicle.Nav.position", SignalType::Vec3),
        dynamic("Vehicle.Aero.alpha", SignalType::Double),
    ]
}

fn only(report: &CompatReport, code: IssueCode) -> &recfmt_icarec::CompatIssue {
    let found: Vec<_> = report.issues.iter().filter(|i| i.code == code).collect();
    assert_eq!(found.len(), 1, "{report}");
    found[0]
}

#[test]
fn same_version_and_signals_is_fully_compatible() {
    let r = validate_against(&schema("2.3.1", &base()), &schema("2.3.1", &base()));
    assert!(r.compatible);
    assert!(r.issues.is_empty(), "{r}");
    assert_eq!(
        r.to_string(),
        "recording schema 2.3.1 against current schema 2.3.1: compatible (0 errors, 0 warnings)\n"
    );
}

#[test]
fn newer_recording_with_additive_changes_is_compatible_and_new_signals_are_ignored() {
    let mut recorded = base();
    recorded.push(dynamic("Vehicle.Aero.beta", SignalType::Double));
    let r = validate_against(&schema("2.4.0", &recorded), &schema("2.3.1", &base()));
    assert!(r.compatible, "{r}");
    assert_eq!(only(&r, IssueCode::NewerRecording).severity, Severity::Info);
    let extra = only(&r, IssueCode::ExtraSignal);
    assert_eq!(extra.severity, Severity::Info);
    assert_eq!(
        extra.message,
        "signal 'Vehicle.Aero.beta' is not in the current schema and is ignored"
    );
}

#[test]
fn removed_signal_with_a_default_is_a_warning() {
    let mut current = base();
    current.push(dynamic("Vehicle.Prop.throttle", SignalType::Double).with_default(json!(0.5)));
    let r = validate_against(&schema("2.3.1", &base()), &schema("2.4.0", &current));
    assert!(r.compatible, "{r}");
    let w = only(&r, IssueCode::MissingWithDefault);
    assert_eq!(w.severity, Severity::Warning);
    assert_eq!(
        w.message,
        "signal 'Vehicle.Prop.throttle' missing, using default: 0.5"
    );
    assert_eq!(r.warnings().count(), 1);
}

#[test]
fn removed_required_signal_without_a_default_is_an_error() {
    let mut current = base();
    current.push(dynamic("Vehicle.Prop.throttle", SignalType::Double));
    let r = validate_against(&schema("2.3.1", &base()), &schema("2.4.0", &current));
    assert!(!r.compatible);
    let e = only(&r, IssueCode::MissingRequired);
    assert_eq!(e.severity, Severity::Error);
    assert_eq!(
        e.message,
        "required signal 'Vehicle.Prop.throttle' (double) not in recording and no default declared"
    );
}

#[test]
fn removed_optional_signal_without_a_default_is_informational() {
    let mut current = base();
    current.push(dynamic("Debug.counter", SignalType::Int64).with_required(false));
    let r = validate_against(&schema("2.3.1", &base()), &schema("2.3.1", &current));
    assert!(r.compatible, "{r}");
    assert_eq!(
        only(&r, IssueCode::MissingOptional).severity,
        Severity::Info
    );
}

#[test]
fn type_mismatch_is_an_error_naming_the_signal_and_both_types() {
    let mut current = base();
    current[1] = dynamic("Vehicle.Aero.alpha", SignalType::Int32);
    let r = validate_against(&schema("2.3.1", &base()), &schema("2.3.1", &current));
    assert!(!r.compatible);
    let e = only(&r, IssueCode::TypeMismatch);
    assert_eq!(
        e.message,
        "type mismatch for 'Vehicle.Aero.alpha': recording=double, current=int32"
    );
    assert_eq!(e.signal.as_deref(), Some("Vehicle.Aero.alpha"));
    assert_eq!(e.recording.as_deref(), Some("double"));
    assert_eq!(e.current.as_deref(), Some("int32"));
}

#[test]
fn type_aliases_are_not_mismatches() {
    let mut recorded = base();
    recorded[1].type_name = "float64".into();
    let r = validate_against(&schema("2.3.1", &recorded), &schema("2.3.1", &base()));
    assert!(r.issues.is_empty(), "{r}");
}

#[test]
fn unit_change_is_an_error_and_lifecycle_change_a_warning() {
    let mut current = base();
    current[1].units = Some("deg".into());
    current[0].lifecycle = Lifecycle::Static;
    let r = validate_against(&schema("2.3.1", &base()), &schema("2.3.1", &current));
    assert!(!r.compatible);
    assert_eq!(
        only(&r, IssueCode::UnitMismatch).message,
        "unit mismatch for 'Vehicle.Aero.alpha': recording=\"m\", current=\"deg\""
    );
    assert_eq!(
        only(&r, IssueCode::LifecycleChange).message,
        "signal 'Vehicle.Nav.position' is dynamic in the recording and static in the current schema"
    );
}

#[test]
fn a_major_version_change_is_breaking() {
    let r = validate_against(&schema("1.9.0", &base()), &schema("2.0.0", &base()));
    assert!(!r.compatible);
    assert_eq!(
        only(&r, IssueCode::MajorVersion).message,
        "breaking schema change: recording schema 1.9.0 and current schema 2.0.0 differ in their major version"
    );
    // 0.x: the minor version is the breaking one.
    let r = validate_against(&schema("0.3.0", &base()), &schema("0.4.0", &base()));
    assert!(!r.compatible);
    let r = validate_against(&schema("0.4.0", &base()), &schema("0.4.7", &base()));
    assert!(r.compatible);
}

#[test]
fn declared_breaking_changes_apply_to_older_recordings_only() {
    let mut current = schema("2.5.0", &base());
    current.compatibility.breaking_changes = vec![
        json!({"signal": "Vehicle.Aero.alpha", "since": "2.4.0", "description": "alpha is now body-frame"}),
        json!({"signal": "Vehicle.Other", "since": "2.4.0"}),
        json!("frame layout of thrusters changed"),
    ];
    let r = validate_against(&schema("2.3.1", &base()), &current);
    let errors: Vec<&str> = r.errors().map(|e| e.message.as_str()).collect();
    assert_eq!(
        errors,
        [
            "breaking change after recording schema 2.3.1: alpha is now body-frame",
            "breaking change after recording schema 2.3.1: frame layout of thrusters changed"
        ]
    );
    // A recording made with the current schema is not affected.
    let r = validate_against(&schema("2.5.0", &base()), &current);
    assert!(r.compatible, "{r}");
}

#[test]
fn a_recording_older_than_the_minimum_is_an_error() {
    let mut current = schema("2.3.1", &base());
    current.compatibility.min_schema_version = Some(semver::Version::new(2, 2, 0));
    current.compatibility.min_icarus_version = Some(semver::Version::new(1, 6, 0));
    let r = validate_against(&schema("2.1.0", &base()), &current);
    assert!(!r.compatible);
    let messages: Vec<&str> = r.errors().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "recording schema 2.1.0 is too old (minimum compatible schema: 2.2.0)",
            "recording made by Icarus 1.5.0 is too old (minimum compatible Icarus: 1.6.0)"
        ]
    );
}

#[test]
fn a_recording_marked_not_warmstart_compatible_is_an_error() {
    let mut recorded = schema("2.3.1", &base());
    recorded.compatibility.warmstart_compatible = false;
    let r = validate_against(&recorded, &schema("2.3.1", &base()));
    assert!(!r.compatible);
    only(&r, IssueCode::NotWarmstartCompatible);
}

#[test]
fn reports_serialize_as_structured_data() {
    let mut current = base();
    current[1] = dynamic("Vehicle.Aero.alpha", SignalType::Int32);
    current.push(dynamic("Vehicle.Prop.throttle", SignalType::Double).with_default(json!(0.5)));
    let r = validate_against(&schema("2.3.1", &base()), &schema("2.3.1", &current));
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["compatible"], json!(false));
    assert_eq!(
        v["issues"][0],
        json!({
            "severity": "error",
            "code": "type_mismatch",
            "signal": "Vehicle.Aero.alpha",
            "recording": "double",
            "current": "int32",
            "message": "type mismatch for 'Vehicle.Aero.alpha': recording=double, current=int32"
        })
    );
    assert_eq!(v["issues"][1]["severity"], json!("warning"));
    let text = r.to_string();
    assert!(
        text.contains("incompatible (1 errors, 1 warnings)"),
        "{text}"
    );
    assert!(text.contains("  error: type mismatch"), "{text}");
    assert!(
        text.contains("  warning: signal 'Vehicle.Prop.throttle' missing"),
        "{text}"
    );
}

#[test]
fn a_recording_on_disk_validates_against_the_current_schema() {
    let tmp = tempfile::tempdir().unwrap();
    recfmt_icarec::generate::write_all_types(tmp.path(), 3).unwrap();
    let rec = recfmt_icarec::IcarecDir::open(tmp.path(), &Default::default()).unwrap();
    let current = recfmt_icarec::generate::all_types_schema().unwrap();
    let r = rec.validate_against(current.doc());
    assert!(r.compatible && r.issues.is_empty(), "{r}");
}
