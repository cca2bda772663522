//! Arguments of `#[divide_and_conquer(...)]`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::{LitStr, Path};

pub(crate) struct Args {
    /// Path of the runtime crate in generated code.
    pub(crate) krate: Path,
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
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let lit: LitStr = meta.value()?.parse()?;
            let path: Path = lit.parse()?;
            krate.set(path, lit.span())
        } else {
            Err(meta
                .error("unknown argument to #[divide_and_conquer]; the only argument is `crate = \"path::to::satin\"`"))
        }
    });
    parser.parse2(args)?;
    Ok(Args { krate: krate.get().unwrap_or_else(|| syn::parse_quote!(::satin)) })
}
