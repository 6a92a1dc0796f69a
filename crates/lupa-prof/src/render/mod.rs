//! The render kit every picture and page of this crate is drawn with: text
//! escaping, data for a page's script, the SVG helpers ([`svg`]) and the HTML
//! page shell with its shared style, sortable tables and the picture page of
//! the blueprints ([`html`]).
//!
//! The writers of each model (profile, coverage, lifetimes, blueprint,
//! history) keep what is theirs (layout, colours, their own script); what
//! looks the same on every page is written here once.
//!
//! Contract: [`escape_xml`] makes any text safe in XML and HTML content and
//! attribute values (control characters but tab and newlines become spaces);
//! [`script_json`] is safe inside a `<script>` element (it never contains
//! `</`).

pub mod html;
pub mod svg;

/// Escape text for XML (SVG) and HTML content and attribute values.
pub fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `v` as a JSON value safe inside a `<script>` element (`</` is written
/// `<\/`); `null` if it cannot be encoded.
pub fn script_json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|_| "null".to_string())
        .replace("</", "<\\/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape_xml("a<b>&\"c\"'\u{1}\n"),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos; \n"
        );
    }

    #[test]
    fn script_data_never_closes_the_script() {
        assert_eq!(script_json("x</script>"), "\"x<\\/script>\"");
        assert_eq!(script_json(&[1, 2]), "[1,2]");
    }
}
