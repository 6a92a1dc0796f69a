//! SVG helpers shared by the pictures (flame graphs, lifetime charts,
//! blueprints, Hip's semaphore picture).
//!
//! Contract: [`open`] writes one line, the `<svg>` start tag with the SVG
//! namespace, the size and a `viewBox` of the same size; [`inline`] is the
//! document without its XML declaration, ready to embed in an HTML page;
//! [`method_box`] is a method's `rect.method` with its `data-method` name
//! (what [`super::html::picture_page`] wires) and a `<title>` tooltip.

use std::fmt::Write as _;

use super::escape_xml;

/// Write the start tag of an SVG document of `width` x `height` (both as they
/// are to be written), with `lead` attributes between the namespace and the
/// size and `trail` attributes after the `viewBox` (each starting with a
/// space, or empty), and a newline.
pub fn open(out: &mut String, lead: &str, width: &str, height: &str, trail: &str) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg"{lead} width="{width}" height="{height}" viewBox="0 0 {width} {height}"{trail}>"#
    );
}

/// `svg` without its XML declaration (and the blank after it), to inline it
/// in a page; an SVG without one is answered as it is.
pub fn inline(svg: &str) -> &str {
    match svg.split_once("?>") {
        Some((head, rest)) if head.trim_start().starts_with("<?xml") => rest.trim_start(),
        _ => svg,
    }
}

/// A method's box: a `rect` of class `method` named `name` (`data-method`)
/// at (x, y), `w` x `h` (one decimal), with the other attributes
/// `attributes` (written as they are) and the tooltip `title`; both texts
/// are escaped; a newline after it.
pub fn method_box(
    out: &mut String,
    name: &str,
    (x, y, w, h): (f64, f64, f64, f64),
    attributes: &str,
    title: &str,
) {
    let _ = writeln!(
        out,
        r#"<rect class="method" data-method="{}" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" {attributes}><title>{}</title></rect>"#,
        escape_xml(name),
        escape_xml(title)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_tag_has_the_namespace_size_and_view_box() {
        let mut s = String::new();
        open(&mut s, " class=\"c\"", "10", "20", " font-size=\"11\"");
        assert_eq!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"c\" width=\"10\" height=\"20\" viewBox=\"0 0 10 20\" font-size=\"11\">\n"
        );
    }

    #[test]
    fn inlining_drops_the_declaration_only() {
        assert_eq!(inline("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(
            inline("<svg><text>?></text></svg>"),
            "<svg><text>?></text></svg>"
        );
    }

    #[test]
    fn a_method_box_escapes_its_name_and_title() {
        let mut s = String::new();
        method_box(&mut s, "A>>b", (1.0, 2.0, 3.0, 4.0), "fill=\"#fff\"", "a<b");
        assert_eq!(
            s,
            "<rect class=\"method\" data-method=\"A&gt;&gt;b\" x=\"1.0\" y=\"2.0\" width=\"3.0\" height=\"4.0\" fill=\"#fff\"><title>a&lt;b</title></rect>\n"
        );
    }
}
