//! `#[divide_and_conquer]` on a module: the functions marked
//! `#[divide_and_conquer]` in it form one group whose calls of each other
//! spawn (mutual recursion: `max_value` calling `min_value` and back). A
//! function alone cannot know that another is annotated; the module's
//! attribute sees them all.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{Item, ItemMod};

use crate::expand;
use crate::methods::{is_marker, take_marker};

/// The expansion of `#[divide_and_conquer(args)] mod m { .. }`.
pub(crate) fn expand_mod(args: TokenStream, mut module: ItemMod) -> TokenStream {
    let Some((_, items)) = &mut module.content else {
        let e = syn::Error::new_spanned(
            &module,
            "#[divide_and_conquer] on a module needs its items inline (`mod m { .. }`), where the attribute can see them",
        )
        .to_compile_error();
        return quote!(#module #e);
    };
    let peers: Vec<syn::Signature> = items
        .iter()
        .filter_map(|item| match item {
            Item::Fn(f) if f.attrs.iter().any(is_marker) => Some(f.sig.clone()),
            _ => None,
        })
        .collect();
    if peers.is_empty() {
        let e = syn::Error::new_spanned(
            &module.ident,
            "#[divide_and_conquer] on a module runs the functions marked `#[divide_and_conquer]` inside it in parallel, calls of each other included; mark them",
        )
        .to_compile_error();
        return quote!(#module #e);
    }
    for item in items.iter_mut() {
        let Item::Fn(f) = item else { continue };
        let Some(args) = take_marker(&mut f.attrs, &args) else { continue };
        let expanded = expand::divide_and_conquer_named(args, f.to_token_stream(), None, peers.clone(), Vec::new());
        *item = Item::Verbatim(expanded);
    }
    module.into_token_stream()
}
