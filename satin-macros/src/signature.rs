//! Checks that a function can become jobs, with errors that say what to do.

use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, ReturnType, Type};

/// Everything wrong with the signature, combined into one error. A local
/// function's parameters (see `expand::local`) need not travel: only
/// `impl Trait` among them is refused (the job type must name it).
pub(crate) fn check(f: &ItemFn, local: bool) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    let sig = &f.sig;
    let err = |span: proc_macro2::Span, msg: &str| syn::Error::new(span, msg);
    if let Some(a) = &sig.asyncness {
        errors.push(err(
            a.span(),
            "#[divide_and_conquer] cannot be used on an `async fn`: jobs run on worker threads, not in a future; remove `async`",
        ));
    }
    if let Some(c) = &sig.constness {
        errors.push(err(c.span(), "#[divide_and_conquer] cannot be used on a `const fn`; remove `const`"));
    }
    if let Some(u) = &sig.unsafety {
        errors.push(err(
            u.span(),
            "#[divide_and_conquer] cannot be used on an `unsafe fn`: its calls may run on other threads and machines; make it safe",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(err(abi.span(), "#[divide_and_conquer] cannot be used on an `extern` function; remove the ABI"));
    }
    if let Some(v) = &sig.variadic {
        errors.push(err(v.span(), "#[divide_and_conquer] cannot be used on a variadic function"));
    }
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => errors.push(err(
                r.span(),
                "a method needs #[divide_and_conquer] on its `impl` block as well (`#[divide_and_conquer] impl Type { .. }`): the jobs of a method are generated beside the block, which only the block's attribute can do",
            )),
            FnArg::Typed(pt) => {
                // One outer reference may borrow; what it refers to is owned.
                let ty = match &*pt.ty {
                    Type::Reference(r) => &*r.elem,
                    ty => ty,
                };
                let found = if local { impl_trait(ty) } else { check_owned(ty, "parameter") };
                if let Some(e) = found {
                    errors.push(e);
                }
            }
        }
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        if let Some(e) = check_owned(ty, "return type") {
            errors.push(e);
        }
    }
    match errors.into_iter().reduce(|mut a, b| {
        a.combine(b);
        a
    }) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `impl Trait` in a local function's parameter: named as a type
/// parameter, it can be a field of the job.
fn impl_trait(ty: &Type) -> Option<syn::Error> {
    match ty {
        Type::ImplTrait(t) => Some(syn::Error::new(
            t.span(),
            "a #[divide_and_conquer] parameter cannot be `impl Trait`: the job holding it must name its type; write a type parameter instead (`fn f<F: Fn(f64) -> f64 + Sync>(f: &F, ..)`)",
        )),
        Type::Paren(p) => impl_trait(&p.elem),
        Type::Group(g) => impl_trait(&g.elem),
        _ => None,
    }
}

/// Rejects types that can never cross a machine boundary: references
/// (other than a parameter's outer one), function pointers and `impl
/// Trait`. Serde and `Send` bounds are checked by the compiler against
/// generated assertions, spanned on the type.
fn check_owned(ty: &Type, what: &str) -> Option<syn::Error> {
    match ty {
        Type::Reference(r) if what == "parameter" => Some(syn::Error::new(
            r.span(),
            "only the outer reference of a #[divide_and_conquer] parameter may borrow (`&[T]`, `&mut [T]`, `&T`, `&str`): what it refers to travels to other machines by value; use owned types inside (`&[String]`, not `&[&str]`)",
        )),
        Type::Reference(r) => Some(syn::Error::new(
            r.span(),
            format!(
                "a #[divide_and_conquer] {what} cannot be a reference: it travels back from other threads and machines; return an owned type (`Vec<T>` for `&[T]`, `String` for `&str`, `T` for `&T`)"
            ),
        )),
        Type::BareFn(f) => Some(syn::Error::new(
            f.span(),
            format!(
                "a #[divide_and_conquer] {what} cannot be a function pointer: it cannot travel to another machine; pass a value that says which function to use (an enum with a method that calls it)"
            ),
        )),
        Type::ImplTrait(t) => Some(syn::Error::new(
            t.span(),
            format!(
                "a #[divide_and_conquer] {what} cannot be `impl Trait`: a job needs a concrete, serialisable type; name the type"
            ),
        )),
        Type::Paren(p) => check_owned(&p.elem, what),
        Type::Group(g) => check_owned(&g.elem, what),
        Type::Tuple(t) => t.elems.iter().find_map(|e| check_owned(e, what)),
        Type::Array(a) => check_owned(&a.elem, what),
        Type::Slice(s) => check_owned(&s.elem, what),
        _ => None,
    }
}
