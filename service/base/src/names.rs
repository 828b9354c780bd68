//! What a bot's name and owner may be: printable text of bounded length, and no name the server
//! uses for its own seats. Names reach every client that lists tables or watches one, so a
//! name must not be able to drive a terminal (ANSI escapes, window titles, CR/LF, NUL), reorder
//! text (bidirectional overrides) or hide characters (zero-width ones).

/// Longest bot name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest owner, in characters.
pub const MAX_OWNER_CHARS: usize = 128;

/// Whether `c` may appear in a name: no control character (C0, DEL, C1), no line or paragraph
/// separator, no format character that changes or hides text (bidirectional controls,
/// zero-width characters, the BOM, invisible operators, interlinear annotations, tags), no
/// private-use or unassigned-looking noncharacter, and no whitespace other than the space.
pub fn printable(c: char) -> bool {
    if c.is_control() || (c.is_whitespace() && c != ' ') {
        return false;
    }
    !matches!(c as u32,
        0x00AD // soft hyphen
        | 0x034F // combining grapheme joiner
        | 0x061C // Arabic letter mark
        | 0x115F | 0x1160 | 0x3164 | 0xFFA0 // Hangul fillers (render as nothing)
        | 0x17B4 | 0x17B5
        | 0x180B..=0x180F // Mongolian variation selectors and vowel separator
        | 0x200B..=0x200F // zero-width space/joiners, LRM, RLM
        | 0x2028..=0x202E // separators, bidirectional embeddings and overrides
        | 0x2060..=0x206F // word joiner, invisible operators, bidirectional isolates
        | 0xFE00..=0xFE0F // variation selectors
        | 0xFEFF // BOM / zero-width no-break space
        | 0xFFF0..=0xFFFB // interlinear annotations
        | 0xFFFE | 0xFFFF
        | 0xE000..=0xF8FF // private use
        | 0xE0000..=0xE0FFF // tags, variation selectors supplement
        | 0xF0000..=0x10FFFF // private use planes
    )
}

/// Why `name` cannot be a bot's name, if it cannot. The name is checked as sent (no trimming:
/// what is stored is what was checked).
pub fn check_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS {
        return Err(format!("must be 1-{MAX_NAME_CHARS} characters"));
    }
    if name.trim() != name {
        return Err("must not begin or end with a space".into());
    }
    if let Some(c) = name.chars().find(|c| !printable(*c)) {
        return Err(format!(
            "must be printable: U+{:04X} is a control, format or invisible character",
            c as u32
        ));
    }
    if stacked_marks(name) {
        return Err(format!(
            "must not stack more than {MAX_COMBINING_RUN} combining marks on a character"
        ));
    }
    if reserved(name) {
        return Err(
            "is reserved: names with a colon and the words house, admin, operator, \
                    server and system belong to the server"
                .into(),
        );
    }
    Ok(())
}

/// Most combining marks in a row (Vietnamese stacks two on a letter; more is a tower of marks
/// drawn over the neighbouring names).
pub const MAX_COMBINING_RUN: usize = 2;

/// Whether `name` stacks more than [`MAX_COMBINING_RUN`] combining marks on one character.
fn stacked_marks(name: &str) -> bool {
    let mut run = 0;
    for c in name.chars() {
        if unicode_normalization::char::is_combining_mark(c) {
            run += 1;
            if run > MAX_COMBINING_RUN {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// What a name looks like: NFKC (fullwidth and compatibility forms to their plain letters),
/// lower case, then Unicode's confusable skeleton (UTS #39: Cyrillic "о" is Latin "o"), lower
/// case again. Two names with the same look cannot be told apart on a screen.
pub fn look(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let nfkc: String = name.nfkc().collect::<String>().to_lowercase();
    unicode_security::confusable_detection::skeleton(&nfkc)
        .collect::<String>()
        .to_lowercase()
}

/// Why `owner` cannot be an owner, if it cannot (it may be empty).
pub fn check_owner(owner: &str) -> Result<(), String> {
    if owner.chars().count() > MAX_OWNER_CHARS {
        return Err(format!("must be at most {MAX_OWNER_CHARS} characters"));
    }
    if let Some(c) = owner.chars().find(|c| !printable(*c)) {
        return Err(format!(
            "must be printable: U+{:04X} is a control, format or invisible character",
            c as u32
        ));
    }
    Ok(())
}

/// Names the server gives its own seats (`house:heuristic`) or that would pass for the server:
/// any name with a colon (every `house:*` and any prefix scheme the server may add), and the
/// bare words below in any case.
/// Compared by their look ([`look`]): "ＨＯＵＳＥ" and a Cyrillic "hоuse" are "house"; a
/// fullwidth colon is a colon.
fn reserved(name: &str) -> bool {
    const WORDS: [&str; 6] = ["house", "admin", "operator", "server", "system", "bete"];
    let seen = look(name);
    name.contains(':')
        || seen.contains(':')
        || WORDS
            .iter()
            .any(|w| name.eq_ignore_ascii_case(w) || seen == look(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass() {
        for n in [
            "alice",
            "Bot 7",
            "Éloïse-β",
            "牌手",
            "a_b.c-d (v2)",
            "🂡 ace",
        ] {
            assert_eq!(check_name(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn hostile_names_fail() {
        for n in [
            "",
            " lead",
            "trail ",
            "\u{1b}[31mred",
            "\u{1b}]0;title\u{7}",
            "a\rb",
            "a\nb",
            "a\0b",
            "a\u{202e}b",
            "a\u{200b}b",
            "a\u{2066}b",
            "a\u{feff}",
            "a\u{9b}b",
            "a\tb",
            "house:heuristic",
            "HOUSE:random",
            "house",
            "Admin",
            "x:y",
        ] {
            assert!(check_name(n).is_err(), "{n:?}");
        }
        assert!(check_name(&"x".repeat(65)).is_err());
        assert_eq!(check_name(&"é".repeat(64)), Ok(()));
        assert!(check_owner("team\u{1b}[2J").is_err());
        assert_eq!(check_owner(""), Ok(()));
    }

    /// Look-alikes of the reserved words (fullwidth, Cyrillic, mixed case, a fullwidth colon)
    /// and towers of combining marks are refused; ordinary accents pass.
    #[test]
    fn look_alikes_and_stacked_marks_fail() {
        for n in [
            "ＨＯＵＳＥ",
            "h\u{043e}use",
            "Ѕуѕtеm",
            "house\u{ff1a}heuristic",
            "a\u{301}\u{302}\u{303}",
            "Z\u{36b}\u{33f}\u{344}\u{334}alg\u{31b}o",
        ] {
            assert!(check_name(n).is_err(), "{n:?} passed");
        }
        for n in ["Việt", "houses", "Zoë", "hôuse"] {
            assert_eq!(check_name(n), Ok(()), "{n}");
        }
    }
}
