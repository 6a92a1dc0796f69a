//! Folded stacks, Brendan Gregg's format: one line per calling context with a
//! non-zero self value, `frame;frame;frame value`, the outermost frame first.
//!
//! Read by `flamegraph.pl`, `inferno-flamegraph`, speedscope (import) and most
//! flame graph tools. A synthetic root is left out of the stacks (its own value,
//! if any, is written as the one-frame stack `<root>`). Frame names have `;` and
//! line breaks replaced, as the format cannot quote them.

use std::io::{self, Write};

use super::sorted_children;
use crate::profile::{NodeId, Profile};

/// A frame name safe for the format.
pub fn frame_name(name: &str) -> String {
    name.replace(';', ":").replace(['\n', '\r'], " ")
}

/// The frame that stands for the contexts below the depth limit of
/// [`write_limited`].
pub const DEEPER: &str = "[deeper]";

/// Write `profile` as folded stacks, contexts in depth-first order with siblings
/// by total descending, then name.
pub fn write<W: Write>(profile: &Profile, w: &mut W) -> io::Result<()> {
    write_limited(profile, usize::MAX, w)
}

/// [`write()`] with stacks of at most `max_depth` frames plus one: the
/// contexts below a context at depth `max_depth` are summed into one line,
/// its stack followed by [`DEEPER`]. The output then grows linearly with
/// the profile (without a limit, with the square of its depth).
pub fn write_limited<W: Write + ?Sized>(
    profile: &Profile,
    max_depth: usize,
    w: &mut W,
) -> io::Result<()> {
    let totals = profile.node_totals();
    let mut roots: Vec<NodeId> = profile.roots().collect();
    super::sort_nodes(profile, &totals, &mut roots);
    // (node, length of `path` to restore before pushing this node, its depth)
    let mut stack: Vec<(NodeId, usize, usize)> = roots.iter().rev().map(|&r| (r, 0, 0)).collect();
    let mut path = String::new();
    while let Some((n, len, depth)) = stack.pop() {
        path.truncate(len);
        let synthetic = profile.is_synthetic(n);
        let depth = depth + usize::from(!synthetic);
        if !synthetic {
            if !path.is_empty() {
                path.push(';');
            }
            path.push_str(&frame_name(&profile.method_of(n).name));
        }
        let v = profile.nodes[n].self_value;
        if v > 0 {
            if synthetic {
                writeln!(w, "{} {v}", frame_name(&profile.method_of(n).name))?;
            } else {
                writeln!(w, "{path} {v}")?;
            }
        }
        if depth >= max_depth && !synthetic {
            let below = totals[n.index()].saturating_sub(v);
            if below > 0 {
                writeln!(w, "{path};{DEEPER} {below}")?;
            }
            continue;
        }
        let here = path.len();
        for c in sorted_children(profile, &totals, n).into_iter().rev() {
            if totals[c.index()] > 0 {
                stack.push((c, here, depth));
            }
        }
    }
    Ok(())
}

/// [`write_limited`] into a string.
pub fn to_string_limited(profile: &Profile, max_depth: usize) -> String {
    let mut buf = Vec::new();
    let _ = write_limited(profile, max_depth, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// [`write()`] into a string.
pub fn to_string(profile: &Profile) -> String {
    let mut buf = Vec::new();
    let _ = write(profile, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;
    use crate::profile::{MethodInfo, Metric, ProfileBuilder};

    #[test]
    fn snapshot() {
        let s = to_string(&sample_profile());
        insta::assert_snapshot!(s);
        // The values add up to the grand total.
        let sum: u64 = s
            .lines()
            .map(|l| {
                l.rsplit_once(' ')
                    .and_then(|(_, v)| v.parse::<u64>().ok())
                    .expect("value")
            })
            .sum();
        assert_eq!(sum, 72);
    }

    #[test]
    fn a_depth_limit_sums_the_deeper_contexts_and_keeps_the_output_linear() {
        let depth = 20_000;
        let mut b = ProfileBuilder::new(Metric::Sends);
        let m = b.add_method(MethodInfo::named("rec"));
        for _ in 0..depth {
            b.enter(m);
            b.add_self(1);
        }
        let p = b.finish();
        let limit = 256;
        let s = to_string_limited(&p, limit);
        // One line per context down to the limit, one for everything below:
        // the output is bounded by contexts times the limit, not depth squared.
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), limit + 1);
        assert!(s.len() <= (limit + 1) * (limit + 1) * "rec;".len() + 64 * (limit + 1));
        let last = lines.last().expect("a line");
        assert!(last.starts_with("rec;"), "{last}");
        assert!(
            last.ends_with(&format!(";{DEEPER} {}", depth - limit)),
            "{last}"
        );
        let sum: u64 = lines
            .iter()
            .filter_map(|l| l.rsplit_once(' ').and_then(|(_, v)| v.parse::<u64>().ok()))
            .sum();
        assert_eq!(sum, depth as u64);
        // Without a limit nothing changes.
        let small = sample_profile();
        assert_eq!(to_string_limited(&small, usize::MAX), to_string(&small));
    }

    #[test]
    fn root_value_and_odd_names() {
        let mut b = ProfileBuilder::new(Metric::Samples);
        b.add_self(2);
        let m = b.add_method(MethodInfo::named("weird;name"));
        b.enter(m);
        b.add_self(1);
        let s = to_string(&b.finish());
        assert_eq!(s, "<root> 2\nweird:name 1\n");
    }
}
