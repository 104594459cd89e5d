use super::*;
use serde_json::json;

pub fn template() -> Schema {
    Schema::parse(include_str!(
        "../../../assets/template/world-engine/schema.toml"
    ))
    .unwrap()
}

#[test]
fn template_matches_neurobook_creation_patches() {
    let s = template();
    let paths = |t: &str| {
        s.creation_defaults(t)
            .into_iter()
            .map(|(p, _)| p)
            .collect::<Vec<_>>()
    };
    assert_eq!(paths("world"), ["/era", "/events", "/year"]);
    assert_eq!(
        paths("character"),
        ["/events", "/hp", "/inventory", "/maxHp", "/skills"]
    );
    assert_eq!(paths("location"), ["/events"]);
    assert_eq!(paths("faction"), ["/events", "/treasury"]);
    assert_eq!(paths("item"), ["/durability", "/events"]);
    assert_eq!(s.creation_defaults("character")[1].1, json!(100));
}

#[test]
fn nodes_and_op_rules() {
    let s = template();
    let t = |p: &str| crate::world::pointer::parse(p).unwrap();
    assert!(s.node("character", &t("/hp")).allows(Op::Increment));
    assert!(!s.node("character", &t("/name")).allows(Op::Increment));
    assert!(s.node("character", &t("/inventory")).allows(Op::Append));
    assert!(!s.node("character", &t("/hp")).allows(Op::Append));
    assert!(s.node("character", &t("/nickname")).allows(Op::Increment));
    assert!(!s.node("character", &t("/nickname")).allows(Op::Append));
    assert_eq!(
        s.node("character", &t("/location/name")),
        Node::ThroughRef("/location".into())
    );
    assert_eq!(
        s.node("character", &t("/hp/x")),
        Node::ThroughScalar("/hp".into())
    );
    assert_eq!(s.node("character", &t("/memory/home")), Node::EmbeddingItem);
    assert_eq!(s.node("character", &t("/")), Node::Root);
}

#[test]
fn values_are_checked() {
    let s = template();
    let n = |p: &str| s.node("character", &crate::world::pointer::parse(p).unwrap());
    assert!(check_value(&n("/hp"), Op::Replace, Some(&json!("lots"))).is_err());
    assert!(check_value(&n("/hp"), Op::Increment, Some(&json!("5")))
        .unwrap_err()
        .to_string()
        .contains("finite number"));
    assert!(check_value(&n("/hp"), Op::Increment, Some(&json!(1.5))).is_err());
    assert!(check_value(&n("/location"), Op::Replace, Some(&json!("l1"))).is_err());
    assert!(check_value(&n("/location"), Op::Replace, Some(&json!("subject://l1"))).is_ok());
    assert!(
        check_value(&n("/events"), Op::Replace, Some(&json!([{"text": "x"}])))
            .unwrap_err()
            .to_string()
            .contains("E5")
    );
    assert!(check_value(&n("/events"), Op::Append, Some(&json!({"text": "x"}))).is_ok());
    assert!(check_value(&n("/events"), Op::Append, Some(&json!("x"))).is_err());
    assert!(check_value(&n("/inventory"), Op::Remove, Some(&json!("x")))
        .unwrap_err()
        .to_string()
        .contains("unique"));
    assert!(check_value(&Node::Root, Op::Replace, Some(&json!(3))).is_err());
}

#[test]
fn bad_schemas_are_explained() {
    assert!(Schema::parse("[types.a.attributes]\nx = \"integer\"\n")
        .unwrap_err()
        .to_string()
        .contains("unknown kind"));
    assert!(
        Schema::parse("[types.a.attributes]\nx = { kind = \"ref\", to = \"b\" }\n")
            .unwrap_err()
            .to_string()
            .contains("undeclared type")
    );
    assert!(
        Schema::parse("[types.a.attributes]\nx = { kind = \"int\", default = \"no\" }\n")
            .unwrap_err()
            .to_string()
            .contains("default")
    );
    assert!(Schema::parse("[kinds.a]\n").is_err());
    // The key path names the attribute, so the author finds it in a long schema.
    match Schema::parse("[types.hero.attributes]\nhp = { kind = \"int\", to = \"x\" }\n") {
        Err(SchemaError::UnknownAttrKey { at, key, kind }) => {
            assert_eq!(
                (at.as_str(), key.as_str(), kind.as_str()),
                ("types.hero.attributes.hp", "to", "int")
            );
        }
        other => panic!("{other:?}"),
    }
    // Broken TOML says on which line the parser stopped.
    let e = Schema::parse("[types.a]\ndescription = \"x\"\n\nbroken = \n").unwrap_err();
    assert!(
        matches!(e, SchemaError::Toml { line: Some(4), .. }),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("line 4: "), "{e}");
    let s = Schema::parse("[types.a.attributes]\ntags = { kind = \"collection\", items = \"string\" }\nst = { kind = \"object\", fields = { str = \"int\" } }\n").unwrap();
    let n = s.node("a", &["st".to_string(), "str".to_string()]);
    assert!(n.allows(Op::Increment));
    assert!(check_value(
        &s.node("a", &["tags".to_string()]),
        Op::Remove,
        Some(&json!("x"))
    )
    .is_ok());
    assert_ne!(s.fingerprint, template().fingerprint);
}

#[test]
fn schemas_without_attributes_parse() {
    // A schema that only describes its types: every path is then untyped.
    let s = Schema::parse(
        "[types.world]\ndescription = \"The world\"\n\n[types.character]\ndescription = \"A person\"\n",
    )
    .unwrap();
    assert!(s.has_type("character"));
    assert!(s.creation_defaults("character").is_empty());
    assert_eq!(s.node("character", &["hp".to_string()]), Node::Untyped);
    assert_eq!(Schema::parse("").unwrap().types.len(), 0);
}
