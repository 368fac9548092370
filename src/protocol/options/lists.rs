//! The list options: which tools are offered (`YIELDSHELL_TOOLS`) and which side-effect
//! categories are blocked (`MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS`).

use super::*;

pub(super) fn parse_tools(r: &Reader<'_>, mode: Mode) -> Result<Vec<Tool>, String> {
    let of_mode: Vec<Tool> = ALL_TOOLS
        .iter()
        .copied()
        .filter(|t| mode == Mode::Trusted || *t != Tool::ShellExecute)
        .collect();
    let Some(list) = r.nonempty("YIELDSHELL_TOOLS") else {
        return Ok(of_mode);
    };
    let name = r
        .get("YIELDSHELL_TOOLS")
        .map_or("YIELDSHELL_TOOLS", |(n, _)| n)
        .to_string();
    let mut chosen = Vec::new();
    for t in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match of_mode.iter().find(|m| m.name() == t) {
            Some(m) => chosen.push(*m),
            None => {
                return Err(format!(
                    "invalid {name}={list:?}: {t:?} is not a tool of {} mode; expected some of {}",
                    if mode == Mode::Shell {
                        "shell"
                    } else {
                        "trusted"
                    },
                    Tool::joined(&of_mode, Api::Current, ",")
                ))
            }
        }
    }
    // Keep the canonical order.
    Ok(of_mode.into_iter().filter(|m| chosen.contains(m)).collect())
}

/// The blocked categories. An empty or blank value stops the server (it would clear the
/// default list without saying so; `,` alone is the way to clear it), except under
/// `--api 1.1`, where it means the default list, as it did in 1.1.2.
pub(super) fn parse_blocked(r: &Reader<'_>) -> Result<Vec<usize>, String> {
    let mut text = r.text("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS");
    let name = r
        .get("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS")
        .map_or("MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS", |(n, _)| n);
    if text.trim().is_empty() {
        if !r.lenient {
            return Err(format!(
                "invalid {name}={text:?}: empty; expected a comma-separated list of {}, ',' \
                 alone to block none, or leave it unset for the default ({DEFAULT_BLOCKED})",
                SIDE_EFFECTS.join(", ")
            ));
        }
        text = DEFAULT_BLOCKED.to_string();
    }
    // Only `,` (blanks around it aside) clears the list: commas and blanks in any other
    // arrangement (`,,`, `, ,`) are more likely a list that lost its items than a request
    // to block nothing.
    let only_commas = text.chars().all(|c| c == ',' || c.is_whitespace());
    if only_commas && text.trim() != "," && !r.lenient {
        return Err(format!(
            "invalid {name}={text:?}: no category in it; expected a comma-separated list of \
             {}, ',' alone to block none, or leave it unset for the default ({DEFAULT_BLOCKED})",
            SIDE_EFFECTS.join(", ")
        ));
    }
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match SIDE_EFFECTS.iter().position(|s| *s == item) {
            Some(i) => {
                if !out.contains(&i) {
                    out.push(i)
                }
            }
            None => {
                return Err(format!(
                    "invalid {name}={text:?}: unknown category {item:?}; expected a comma-separated list of {} (or ',' for none)",
                    SIDE_EFFECTS.join(", ")
                ))
            }
        }
    }
    Ok(out)
}
