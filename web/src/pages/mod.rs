//! One module per page, and the small formatting helpers they share.

pub mod admin;
pub mod deciders;
pub mod estate;
pub mod health;
pub mod import;
pub mod login;
pub mod new_estate;
pub mod next_steps;
pub mod place;
pub mod placement;
pub mod policy;
pub mod review;
pub mod whatif;

use leptos::prelude::*;
use serde_json::Value;

/// A JSON string, or "" (result fields the engine always writes).
pub fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A number with `digits` decimals; "unknown" for null.
pub fn num(v: &Value, digits: usize) -> String {
    fixed(v.as_f64(), digits)
}

/// [`num`] of a typed value: `digits` decimals; "unknown" for `None`.
pub fn fixed(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(x) => {
            let t = format!("{x:.digits$}");
            // "-0.00" reads as a loss that is not there.
            match t.strip_prefix('-') {
                Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
                _ => t,
            }
        }
        None => "unknown".to_string(),
    }
}

/// A signed number with `digits` decimals ("+3.2", "−1.0").
pub fn signed(x: f64, digits: usize) -> String {
    if x < 0.0 {
        format!("−{:.digits$}", -x)
    } else {
        format!("+{x:.digits$}")
    }
}

/// The one sign convention of every page (issue 34): a saving is
/// positive and drawn good, a cost increase negative and drawn bad. The
/// class of a figure of points saved (`before − after`).
pub fn saving_class(saved: f64) -> &'static str {
    // Below the last digit shown it is neither.
    if saved.abs() < 0.05 {
        "delta"
    } else if saved > 0.0 {
        "delta good"
    } else {
        "delta bad"
    }
}

/// "+636.6 saved" or "−369.6, a cost increase", coloured by
/// [`saving_class`].
pub fn saving_span(before: f64, after: f64) -> impl IntoView {
    let saved = before - after;
    let words = if saved < -0.05 {
        format!("{}, a cost increase", signed(saved, 1))
    } else {
        format!("{} saved", signed(saved, 1))
    };
    view! { <span class=saving_class(saved) data-testid="saving" data-saving=format!("{saved:.3}")>{words}</span> }
}

/// A table cell of points saved, signed and coloured as [`saving_span`].
pub fn saving_cell(before: f64, after: f64) -> impl IntoView {
    let saved = before - after;
    view! { <td class=format!("n {}", saving_class(saved))>{signed(saved, 1)}</td> }
}

/// Milliseconds as an input shows them: whole when whole, else one
/// decimal (the table's means are whole or halves).
pub fn ms_text(ms: f64) -> String {
    if ms.fract() == 0.0 {
        format!("{ms:.0}")
    } else {
        format!("{ms:.1}")
    }
}

/// An age in seconds in the largest whole unit people read at a glance.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    if s < 120 {
        format!("{s} s")
    } else if s < 2 * 3600 {
        format!("{} min", s / 60)
    } else if s < 2 * 86400 {
        format!("{} h", s / 3600)
    } else {
        format!("{} d", s / 86400)
    }
}

/// The elements of an array field (empty when absent).
pub fn arr(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// Compact JSON laid out for reading (two-space indents, one member per
/// line) without re-serialising it: members keep their order and every
/// scalar keeps its bytes, so taking the added white space out outside
/// strings gives back the input exactly. Text that is not compact JSON
/// comes out with the same rule applied, never refused.
pub fn pretty_json(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() + compact.len() / 4);
    let mut depth = 0usize;
    let (mut in_str, mut escaped) = (false, false);
    let mut chars = compact.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                // An empty object or array stays on its line.
                if matches!(chars.peek(), Some('}' | ']')) {
                    out.push(chars.next().expect("peeked"));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            _ => out.push(c),
        }
    }
    out
}

/// Items a long list shows before "Show more": a screenful, and what
/// keeps a 5,000-service estate's Placement page a few thousand elements
/// (its "fit cannot be told" list alone was 7,000).
pub const LIST_STEP: usize = 50;

/// A `<ul>` of `items` drawn by `render`, the first [`LIST_STEP`] at once,
/// then "Show N more" and "Show all M" for the rest.
pub fn capped_list<T, V>(
    items: Vec<T>,
    render: impl Fn(T) -> V + Clone + Send + Sync + 'static,
    testid: &'static str,
    noun: &'static str,
) -> impl IntoView
where
    T: Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let total = items.len();
    let shown = RwSignal::new(LIST_STEP.min(total));
    let items = std::sync::Arc::new(items);
    view! {
        <ul data-testid=testid data-total=total>
            {move || items.iter().take(shown.get()).cloned().map(render.clone()).collect_view()}
        </ul>
        {move || (shown.get() < total).then(|| {
            let more = LIST_STEP.min(total - shown.get());
            view! {
                <p class="pager" data-testid=format!("{testid}-more")>
                    {format!("{} of {total} {noun} shown. ", shown.get())}
                    <button type="button" class="small" on:click=move |_| shown.update(|n| *n = (*n + LIST_STEP).min(total))>{format!("Show {more} more")}</button>
                    " "
                    <button type="button" class="small" on:click=move |_| shown.set(total)>{format!("Show all {total}")}</button>
                </p>
            }
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_only_adds_white_space() {
        let compact = r#"{"schema":1,"b":[],"a":{"x":"a,b:{c}\"[","y":[1.50,-2e3,null]},"z":{}}"#;
        let pretty = pretty_json(compact);
        assert_eq!(
            pretty,
            "{\n  \"schema\": 1,\n  \"b\": [],\n  \"a\": {\n    \"x\": \"a,b:{c}\\\"[\",\n    \"y\": [\n      1.50,\n      -2e3,\n      null\n    ]\n  },\n  \"z\": {}\n}"
        );
        // Parsing both gives the same value, members in the same order.
        let a: Value = serde_json::from_str(compact).unwrap();
        let b: Value = serde_json::from_str(&pretty).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn ages_and_numbers_read_plainly() {
        assert_eq!(age(59), "59 s");
        assert_eq!(age(600), "10 min");
        assert_eq!(age(3 * 3600), "3 h");
        assert_eq!(age(3 * 86400), "3 d");
        assert_eq!(num(&Value::Null, 1), "unknown");
        assert_eq!(num(&serde_json::json!(-0.001), 2), "0.00");
        assert_eq!(num(&serde_json::json!(-1.5), 1), "-1.5");
        assert_eq!(fixed(None, 1), "unknown");
        assert_eq!(fixed(Some(-0.001), 2), "0.00");
        assert_eq!(fixed(Some(2.26), 1), "2.3");
        assert_eq!(signed(-1.04, 1), "−1.0");
        assert_eq!(signed(2.0, 0), "+2");
    }
}
