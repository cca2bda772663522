//! How each parameter is passed, and what a borrowed one becomes on
//! another node.

use syn::Type;

/// How a parameter is passed: owned, or borrowed (`&U`, `&mut U`).
pub(super) enum ParamKind {
    Owned,
    Shared(Type),
    Mut(Type),
}

impl ParamKind {
    pub(super) fn of(ty: &Type) -> ParamKind {
        match ty {
            Type::Reference(r) if r.mutability.is_some() => ParamKind::Mut((*r.elem).clone()),
            Type::Reference(r) => ParamKind::Shared((*r.elem).clone()),
            Type::Paren(p) => ParamKind::of(&p.elem),
            Type::Group(g) => ParamKind::of(&g.elem),
            _ => ParamKind::Owned,
        }
    }
}

/// The owned type that a borrowed `&U` decodes into on another node, as
/// written: `[T]` → `Vec<T>`, `str` → `String`, any other `U` itself; none
/// if `U` holds a reference or a lifetime (then `Travel` names it).
pub(super) fn owned_form(u: &Type) -> Option<Type> {
    struct HasBorrow(bool);
    impl<'ast> syn::visit::Visit<'ast> for HasBorrow {
        fn visit_lifetime(&mut self, _: &'ast syn::Lifetime) {
            self.0 = true;
        }
        fn visit_type_reference(&mut self, _: &'ast syn::TypeReference) {
            self.0 = true;
        }
    }
    let mut found = HasBorrow(false);
    syn::visit::Visit::visit_type(&mut found, u);
    if found.0 {
        return None;
    }
    Some(match u {
        Type::Slice(s) => {
            let elem = &s.elem;
            syn::parse_quote!(::std::vec::Vec<#elem>)
        }
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => syn::parse_quote!(::std::string::String),
        other => other.clone(),
    })
}
