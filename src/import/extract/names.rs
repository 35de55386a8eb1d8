//! Names the data file does not carry: the domain name from the file
//! name, nouns from variable names (`Diseases` -> `disease`), titles.

/// Title case of a slug: `medical-ind` -> `Medical Ind`.
pub(super) fn title_case(s: &str) -> String {
    s.split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `MedicalTests` -> `medical tests`.
pub(super) fn words_of(var: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in var.chars() {
        if c == '_' {
            out.push(' ');
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    out.trim().to_string()
}

/// English singular of a plural noun phrase (last word), best effort.
pub fn singular(plural: &str) -> String {
    let (head, last) = match plural.rsplit_once(' ') {
        Some((h, l)) => (format!("{h} "), l),
        None => (String::new(), plural),
    };
    let word = if let Some(stem) = last.strip_suffix("ies") {
        format!("{stem}y")
    } else if last.ends_with("sis") || last.ends_with("ss") || last.ends_with("us") {
        last.to_string()
    } else if let Some(stem) = last.strip_suffix("ses").filter(|s| s.ends_with('s')) {
        format!("{stem}s")
    } else if let Some(stem) = ["ches", "shes", "xes"].iter().find_map(|suf| {
        last.strip_suffix(suf)
            .map(|s| format!("{s}{}", &suf[..suf.len() - 2]))
    }) {
        stem
    } else if let Some(stem) = last.strip_suffix('s') {
        stem.to_string()
    } else {
        last.to_string()
    };
    format!("{head}{word}")
}

/// `medical_ind_data.py` -> `medical-ind`.
pub fn default_name(file: &str) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = base.strip_suffix(".py").unwrap_or(base);
    let stem = stem.strip_suffix("_data").unwrap_or(stem);
    let mut slug = String::new();
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-').to_string();
    if slug.is_empty() {
        "imported".into()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::plural;

    #[test]
    fn nouns() {
        assert_eq!(singular(&words_of("Diseases")), "disease");
        assert_eq!(singular(&words_of("Abilities")), "ability");
        assert_eq!(singular(&words_of("Diagnosis")), "diagnosis");
        assert_eq!(singular(&words_of("MedicalTests")), "medical test");
        assert_eq!(singular("boxes"), "box");
        assert_eq!(plural("disease"), "diseases");
        assert_eq!(plural("ability"), "abilities");
        assert_eq!(plural("diagnosis"), "diagnoses");
        assert_eq!(plural("test"), "tests");
        assert_eq!(plural("day"), "days");
        assert_eq!(plural("match"), "matches");
        assert_eq!(default_name("../x/medical_ind_data.py"), "medical-ind");
        assert_eq!(default_name("Weird Name!.py"), "weird-name");
        assert_eq!(default_name("__.py"), "imported");
        assert_eq!(title_case("medical-ind"), "Medical Ind");
    }
}
