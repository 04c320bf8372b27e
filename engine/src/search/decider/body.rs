//! Parsing untrusted bodies: a decider's response and a decider request,
//! bounded in size, depth and strings before serde reads them, every
//! problem named with its path.

use super::*;

// ---------------------------------------------------------------------------
// Parsing untrusted bodies.

/// Fail if `bytes` nest arrays/objects deeper than `max`. A linear scan of
/// the raw bytes that skips string contents; no recursion, no allocation.
pub fn check_depth(bytes: &[u8], max: usize) -> Result<(), BodyError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut line, mut line_start) = (1usize, 0usize);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(BodyError::TooDeep {
                        max,
                        line,
                        column: i - line_start + 1,
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// UTF-8 first, so that a body in another encoding is named as such
/// rather than as a syntax error at its first byte.
pub(super) fn check_utf8(bytes: &[u8]) -> Result<(), BodyError> {
    std::str::from_utf8(bytes).map(|_| ()).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.len()
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        BodyError::NotJson {
            line,
            column,
            message: format!(
                "the body is not UTF-8 (invalid byte at line {line}, column {column})"
            ),
        }
    })
}

/// A serde_json error as a body error; `what` names the expected shape.
pub(super) fn json_error(e: serde_json::Error, what: &str) -> BodyError {
    match e.classify() {
        serde_json::error::Category::Data => BodyError::WrongShape {
            message: format!("not {what}: {e}"),
        },
        _ => BodyError::NotJson {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        },
    }
}

/// The items of a reply, at most [`MAX_PROPOSALS`] kept; `total` counts
/// them all (the rest are skipped without being stored).
pub(super) struct Items {
    pub(super) items: Vec<Value>,
    pub(super) total: usize,
}

pub(super) fn read_items<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Items, A::Error> {
    let mut items = Vec::new();
    while items.len() < MAX_PROPOSALS {
        match seq.next_element::<Value>()? {
            Some(v) => items.push(v),
            None => {
                let total = items.len();
                return Ok(Items { items, total });
            }
        }
    }
    let mut total = items.len();
    while seq.next_element::<IgnoredAny>()?.is_some() {
        total += 1;
    }
    Ok(Items { items, total })
}

pub(super) struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Items;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`proposals` to be a list of proposals")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Items, A::Error> {
        read_items(seq)
    }
}

impl<'de> Deserialize<'de> for Items {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Items, D::Error> {
        d.deserialize_seq(ItemsVisitor)
    }
}

pub(super) struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Items;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of proposals or an object {\"proposals\": [...]}")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Items, A::Error> {
        read_items(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items, A::Error> {
        let mut items = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "proposals" {
                if items.is_some() {
                    return Err(de::Error::custom("`proposals` appears twice"));
                }
                items = Some(map.next_value::<Items>()?);
            } else {
                // Unknown top-level fields are allowed: fields are additive.
                map.next_value::<IgnoredAny>()?;
            }
        }
        items.ok_or_else(|| de::Error::custom("the reply object has no `proposals` list"))
    }
}

/// Parse an external decider's reply: `{"proposals": [...]}` or a bare
/// `[...]` of `{serviceId, to, reason}` items.
///
/// The body as a whole is refused (an `Err`) only when it is too large,
/// too deeply nested, not JSON, not one of the two shapes, or has more than
/// [`MAX_PROPOSALS`] items. Each item that is not a well-formed proposal
/// (not an object, a missing, non-string, empty or overlong `serviceId` or
/// `to`, a non-string or overlong `reason`) becomes a
/// [`RawProposal::Malformed`] and is refused on its own by [`score`].
/// Unknown fields of an item are ignored (fields are additive).
pub fn parse_response(bytes: &[u8]) -> Result<Vec<RawProposal>, ResponseError> {
    if bytes.len() > MAX_BODY_BYTES {
        return Err(BodyError::TooLarge {
            max: MAX_BODY_BYTES,
        });
    }
    let bytes = strip_bom(bytes);
    check_utf8(bytes)?;
    check_depth(bytes, MAX_DEPTH)?;
    let what = "a decider reply";
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let items = de
        .deserialize_any(BodyVisitor)
        .map_err(|e| json_error(e, what))?;
    de.end().map_err(|e| json_error(e, what))?;
    if items.total > MAX_PROPOSALS {
        return Err(BodyError::TooMany {
            what: "proposals",
            count: items.total,
            max: MAX_PROPOSALS,
        });
    }
    Ok(items.items.iter().map(item).collect())
}

/// Parse a schema-1 request, as a decider written against this crate
/// would: the same size and depth checks before deserialising, then the
/// schema number, the counts and every string's length.
pub fn parse_request(bytes: &[u8]) -> Result<DeciderRequest, BodyError> {
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(BodyError::TooLarge {
            max: MAX_REQUEST_BYTES,
        });
    }
    let bytes = strip_bom(bytes);
    check_utf8(bytes)?;
    check_depth(bytes, MAX_DEPTH)?;
    let r: DeciderRequest = crate::strict::from_slice(bytes)
        .map_err(|e| json_error(e, "a schema-1 decider request"))?;
    if r.schema != 1 {
        return Err(BodyError::WrongShape {
            message: format!("schema {} is not supported; expected 1", r.schema),
        });
    }
    for (what, count, max) in [
        ("clusters", r.clusters.len(), MAX_REQUEST_CLUSTERS),
        ("services", r.services.len(), MAX_REQUEST_SERVICES),
        ("flows", r.flows.len(), MAX_REQUEST_FLOWS),
    ] {
        if count > max {
            return Err(BodyError::TooMany { what, count, max });
        }
    }
    let mut strings: Vec<(&str, &str)> = vec![
        ("estate", &r.estate),
        ("estate_version", &r.estate_version),
        ("policy_digest", &r.policy_digest),
        ("now", &r.now),
    ];
    for c in &r.clusters {
        for s in [&c.id, &c.site, &c.tier, &c.trust_zone, &c.health] {
            strings.push(("a cluster field", s));
        }
    }
    for l in &r.links {
        for s in [&l.a, &l.b, &l.derivation] {
            strings.push(("a link field", s));
        }
    }
    for p in &r.paths {
        for s in [&p.a, &p.b] {
            strings.push(("a path field", s));
        }
    }
    for s in &r.services {
        if s.candidates.len() + s.cant_tell.len() > r.clusters.len() {
            return Err(BodyError::WrongShape {
                message: format!("service {:?} lists more clusters than exist", cut(&s.id)),
            });
        }
        for v in [&s.id, &s.owner, &s.cluster, &s.mobility] {
            strings.push(("a service field", v));
        }
        for v in s.candidates.iter().chain(&s.cant_tell) {
            strings.push(("a service's cluster list", v));
        }
    }
    for f in &r.flows {
        for s in [&f.from, &f.to] {
            strings.push(("a flow end", s));
        }
    }
    if let Some((what, s)) = strings.iter().find(|(_, s)| s.len() > MAX_STRING_BYTES) {
        return Err(BodyError::WrongShape {
            message: format!(
                "{what} is {} bytes long; at most {MAX_STRING_BYTES} are accepted",
                s.len()
            ),
        });
    }
    Ok(r)
}

/// A string for display, cut to the limit at a character boundary.
pub(super) fn cut(s: &str) -> String {
    if s.len() <= MAX_STRING_BYTES {
        return s.to_string();
    }
    let mut end = MAX_STRING_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Spellings of `serviceId` a decider might plausibly send by mistake.
pub(super) const SERVICE_ID_MISSPELLINGS: [&str; 5] = [
    "service_id",
    "serviceID",
    "serviceid",
    "service-id",
    "service",
];

/// One string field of an item: `(valid value, what to show)`.
pub(super) fn string_field(
    obj: &Map<String, Value>,
    key: &str,
    required: bool,
    problems: &mut Vec<String>,
) -> (Option<String>, Option<String>) {
    match obj.get(key) {
        None | Some(Value::Null) => {
            if required {
                let hint = if key == "serviceId" {
                    SERVICE_ID_MISSPELLINGS
                        .iter()
                        .find(|k| obj.contains_key(**k))
                } else {
                    None
                };
                match hint {
                    Some(k) => {
                        problems.push(format!(
                            "missing `serviceId` (found `{k}`; the field is spelled `serviceId`)"
                        ));
                        let shown = obj.get(*k).and_then(Value::as_str).map(cut);
                        return (None, shown);
                    }
                    None => problems.push(format!("missing `{key}`")),
                }
            }
            (None, None)
        }
        Some(Value::String(s)) => {
            if s.len() > MAX_STRING_BYTES {
                problems.push(format!(
                    "`{key}` is {} bytes long; at most {MAX_STRING_BYTES} are accepted",
                    s.len()
                ));
                (None, Some(cut(s)))
            } else if required && s.trim().is_empty() {
                problems.push(format!("`{key}` is empty"));
                (None, Some(s.clone()))
            } else {
                (Some(s.clone()), Some(s.clone()))
            }
        }
        Some(v) => {
            problems.push(format!("`{key}` must be a string, got {}", describe(v)));
            (None, None)
        }
    }
}

pub(super) fn item(v: &Value) -> RawProposal {
    let Some(obj) = v.as_object() else {
        return RawProposal::Malformed {
            service_id: None,
            to: None,
            reason: None,
            message: format!(
                "expected an object {{\"serviceId\", \"to\", \"reason\"}}, got {}",
                describe(v)
            ),
        };
    };
    let mut problems = Vec::new();
    let (service_id, shown_service) = string_field(obj, "serviceId", true, &mut problems);
    let (to, shown_to) = string_field(obj, "to", true, &mut problems);
    let (reason, shown_reason) = string_field(obj, "reason", false, &mut problems);
    match (service_id, to, problems.is_empty()) {
        (Some(service_id), Some(to), true) => RawProposal::Valid(Proposal {
            service_id,
            to,
            reason: reason.unwrap_or_default(),
        }),
        _ => RawProposal::Malformed {
            service_id: shown_service,
            to: shown_to,
            reason: shown_reason,
            message: problems.join("; "),
        },
    }
}
