//! Arguments of `#[divide_and_conquer(...)]`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{LitInt, LitStr, Path};

pub(crate) struct Args {
    /// Path of the runtime crate in generated code.
    pub(crate) krate: Path,
    /// `expect = "2s"`: how long a call of this function is expected to
    /// take on another node, in nanoseconds (timeouts count from it).
    pub(crate) expect_ns: Option<u64>,
    /// `retries = 3`: attempts after the first when a call fails on
    /// another node.
    pub(crate) retries: Option<u32>,
    /// `strict`: a function none of whose calls can run in parallel is an
    /// error instead of a warning.
    pub(crate) strict: bool,
    /// `local`: the function's calls never leave their process, whatever
    /// its parameters (`Job::LOCAL`).
    pub(crate) local: bool,
    /// How messages name the function, if not by its own name (set by the
    /// expansion of methods, not an argument).
    pub(crate) shown: Option<String>,
    /// The other functions of its group (an annotated module or `impl`
    /// block), whose calls spawn too (set by the group's expansion).
    pub(crate) peers: Vec<syn::Signature>,
    /// Annotated functions beside it in its source file that it calls and
    /// that do not call it back: of its group where that makes a call
    /// spawn (set by `siblings`).
    pub(crate) callable: Vec<syn::Signature>,
}

/// An argument that may be given at most once.
struct Once<T> {
    name: &'static str,
    value: Option<(T, Span)>,
}

impl<T> Once<T> {
    fn new(name: &'static str) -> Self {
        Once { name, value: None }
    }

    fn set(&mut self, value: T, span: Span) -> syn::Result<()> {
        if let Some((_, first)) = &self.value {
            let mut e = syn::Error::new(span, format!("`{}` is given twice", self.name));
            e.combine(syn::Error::new(*first, "first given here"));
            return Err(e);
        }
        self.value = Some((value, span));
        Ok(())
    }

    fn get(self) -> Option<T> {
        self.value.map(|(v, _)| v)
    }
}

pub(crate) fn parse(args: TokenStream) -> syn::Result<Args> {
    let mut krate = Once::new("crate");
    let mut expect = Once::new("expect");
    let mut retries = Once::new("retries");
    let mut strict = Once::new("strict");
    let mut local = Once::new("local");
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("strict") {
            return strict.set(true, meta.path.span());
        }
        if meta.path.is_ident("local") {
            return local.set(true, meta.path.span());
        }
        if meta.path.is_ident("crate") {
            let lit: LitStr = meta.value()?.parse()?;
            let path: Path = lit.parse()?;
            krate.set(path, lit.span())
        } else if meta.path.is_ident("expect") {
            let lit: LitStr = meta.value()?.parse()?;
            let ns = duration_ns(&lit.value()).ok_or_else(|| {
                syn::Error::new(lit.span(), "`expect` is a duration such as \"500ms\", \"2s\", \"5m\" or \"1h\"")
            })?;
            expect.set(ns, lit.span())
        } else if meta.path.is_ident("retries") {
            let value = meta.value()?;
            let what = |span| syn::Error::new(span, "`retries` is a number of attempts, such as 3");
            let lit: LitInt = value.parse().map_err(|e| what(e.span()))?;
            let n: u32 = lit.base10_parse().map_err(|_| what(lit.span()))?;
            retries.set(n, lit.span())
        } else {
            Err(meta.error(
                "unknown argument to #[divide_and_conquer]; the arguments are `crate = \"path::to::satin\"`, \
                 `expect = \"2s\"`, `retries = 3`, `strict` and `local`",
            ))
        }
    });
    parser.parse2(args)?;
    Ok(Args {
        krate: krate.get().unwrap_or_else(|| syn::parse_quote!(::satin)),
        expect_ns: expect.get(),
        retries: retries.get(),
        strict: strict.get().unwrap_or(false),
        local: local.get().unwrap_or(false),
        shown: None,
        peers: Vec::new(),
        callable: Vec::new(),
    })
}

/// `500ms`, `2s`, `1.5s`, `5m`, `1h` in nanoseconds; positive and finite.
fn duration_ns(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60e9)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600e9)
    } else {
        return None;
    };
    let x: f64 = num.trim().parse().ok()?;
    let ns = x * scale;
    (ns.is_finite() && ns >= 1.0 && ns < u64::MAX as f64).then_some(ns as u64)
}
