//! Does a piece of code mention a variable? Token-level, so it also sees
//! uses inside macros, including `{name}` captures in format strings.

use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::ToTokens;

pub(crate) fn mentions(code: &impl ToTokens, name: &Ident) -> bool {
    stream_mentions(code.to_token_stream(), &name.to_string())
}

fn stream_mentions(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => stream_mentions(g.stream(), name),
        TokenTree::Literal(l) => {
            let s = l.to_string();
            s.starts_with('"') && (s.contains(&format!("{{{name}}}")) || s.contains(&format!("{{{name}:")))
        }
        TokenTree::Punct(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::{format_ident, quote};

    #[test]
    fn finds_plain_nested_and_format_uses() {
        let x = format_ident!("x");
        assert!(mentions(&quote!(a + x), &x));
        assert!(mentions(
            &quote!(if c {
                f(x)
            }),
            &x
        ));
        assert!(mentions(&quote!(println!("{x}")), &x));
        assert!(mentions(&quote!(println!("{x:>4}")), &x));
        assert!(!mentions(&quote!(xx + y.x2), &x));
        assert!(!mentions(&quote!(println!("x")), &x));
    }
}
