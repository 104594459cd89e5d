//! What went wrong in JavaScript, as one line for the agent or the author: the error's name
//! and message, and the line in the named file where it was thrown.

use rquickjs::{Ctx, Error, Object, Value};

/// What went wrong in JavaScript, as one line for the agent: `TypeError: x is not a function
/// (line 3)`. `file` is the name the code was compiled under; its line numbers are reported.
pub fn describe(ctx: &Ctx<'_>, err: Error, file: &str) -> String {
    match err {
        Error::Exception => describe_value(ctx.catch(), file),
        other => other.to_string(),
    }
}

/// Like [`describe`] for a value that was thrown or a promise rejected with.
pub fn describe_value(v: Value<'_>, file: &str) -> String {
    if let Some(obj) = v.as_object() {
        let name: Option<String> = obj.get("name").ok();
        let message: Option<String> = obj.get("message").ok();
        if name.is_some() || message.is_some() {
            let stack: Option<String> = obj.get("stack").ok();
            let line = stack.as_deref().and_then(|s| line_in(s, file));
            let mut out = format!(
                "{}: {}",
                name.unwrap_or_else(|| "Error".into()),
                message.unwrap_or_default()
            );
            if let Some(l) = line {
                out.push_str(&format!(" (line {l})"));
            }
            return out;
        }
        return format!("uncaught {}", to_json_text(obj));
    }
    if v.is_null() || v.is_undefined() {
        // QuickJS throws null when it cannot even allocate the error object.
        return "uncaught null (the script probably ran out of memory)".into();
    }
    match v.as_string().and_then(|s| s.to_string().ok()) {
        Some(s) => format!("uncaught {s:?}"),
        None => format!("uncaught {}", value_text(&v)),
    }
}

fn to_json_text(obj: &Object<'_>) -> String {
    obj.ctx()
        .json_stringify(obj.clone())
        .ok()
        .flatten()
        .and_then(|s| s.to_string().ok())
        .map(|s| s.chars().take(200).collect())
        .unwrap_or_else(|| "object".into())
}

fn value_text(v: &Value<'_>) -> String {
    if let Some(n) = v.as_number() {
        return n.to_string();
    }
    if let Some(b) = v.as_bool() {
        return b.to_string();
    }
    format!("{:?}", v.type_of())
}

/// First `file:LINE` in a QuickJS stack trace.
pub fn line_in(stack: &str, file: &str) -> Option<u32> {
    let pat = format!("{file}:");
    let mut rest = stack;
    while let Some(i) = rest.find(&pat) {
        let after = &rest[i + pat.len()..];
        let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse() {
            return Some(n);
        }
        rest = after;
    }
    None
}
