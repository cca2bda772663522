//! The job type of a function whose parameters are all owned, its
//! encoding, and how a node finds it when it arrives as bytes.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Type};

use crate::generics::{self, TypeParams};

/// The job type of a function whose parameters are all owned: a tuple
/// struct of them, its encoding, its `Job` impl (`run_fns` and the
/// function's `policy`) and its registration.
#[allow(clippy::too_many_arguments)]
pub(super) fn owned(
    krate: &syn::Path,
    vis: &syn::Visibility,
    job: &Ident,
    types: &[&Type],
    output: &Type,
    type_params: &TypeParams,
    fn_id: &str,
    run_fns: &TokenStream,
    policy: &TokenStream,
) -> TokenStream {
    let lt = generics::static_lifetime();
    let (decl, args, where_) = (type_params.params(None), type_params.args(), type_params.where_with(Some(&lt)));
    let serde_impls = owned_serde_impls(krate, job, types.len(), type_params);
    let codec = serde_codec(krate);
    let entry = quote!(#krate::__private::JobFn::of::<#job #args>()#policy);
    let (instance, submit) = registration(krate, type_params, &quote!(#job #args), &entry);
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #job #decl (#(pub #types),*);

        #serde_impls

        impl #decl #krate::Job for #job #args #where_ {
            type Output = #output;
            #codec
            const FN_ID: &'static str = concat!(module_path!(), #fn_id);
            #instance
            #run_fns
        }

        #submit
    }
}

/// How a node finds the function's jobs when they arrive as bytes: the
/// `inventory` entry `entry`, or for a generic function a `Job::instance_id`
/// that registers each instantiation on first use (`static_job`: its
/// `'static` job type). Returns (items of the `Job` impl, items beside it).
pub(super) fn registration(
    krate: &syn::Path,
    type_params: &TypeParams,
    static_job: &TokenStream,
    entry: &TokenStream,
) -> (TokenStream, TokenStream) {
    if !type_params.is_generic() {
        return (quote!(), quote!(#krate::__private::inventory::submit! { #entry }));
    }
    let type_names = type_params.type_names();
    let instance = quote! {
        fn instance_id() -> &'static str {
            #krate::__private::instance::<#static_job>(Self::FN_ID, #type_names, || #entry)
        }
    };
    (instance, quote!())
}

/// `Serialize` and `Deserialize` of a job whose fields are all owned, one
/// field at a time through `Param` (see `satin::job::fields`): a field type
/// that cannot travel fails `Param`'s bound, with its message, and nothing
/// else. The encoding is the derive's (a tuple of the fields).
fn owned_serde_impls(krate: &syn::Path, job: &Ident, arity: usize, type_params: &TypeParams) -> TokenStream {
    let serde = quote!(#krate::__private::serde);
    let private = quote!(#krate::__private);
    let index = (0..arity).map(syn::Index::from).collect::<Vec<_>>();
    let readers = vec![quote::format_ident!("de_field"); arity];
    let deserialize = deserialize_impl(krate, job, &readers, type_params);
    let lt = generics::static_lifetime();
    let (decl, args, where_) = (type_params.params(None), type_params.args(), type_params.where_with(Some(&lt)));
    quote! {
        impl #decl #serde::Serialize for #job #args #where_ {
            fn serialize<__S: #serde::Serializer>(&self, __s: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                let mut __t = #serde::Serializer::serialize_tuple(__s, #arity)?;
                #( #private::ser_field(&mut __t, &self.#index)?; )*
                #serde::ser::SerializeTuple::end(__t)
            }
        }

        #deserialize
    }
}

/// `Deserialize` of a job type whose fields are all owned, one field at a
/// time through `Param` (see `owned_serde_impls`): each read by its
/// function of `__private` (`de_field`, or `de_lent` for a shared
/// borrow's owned form).
pub(super) fn deserialize_impl(
    krate: &syn::Path,
    job: &Ident,
    readers: &[Ident],
    type_params: &TypeParams,
) -> TokenStream {
    let serde = quote!(#krate::__private::serde);
    let private = quote!(#krate::__private);
    let arity = readers.len();
    let positions = 0..arity;
    // The visitor, an item of its own, declares the type parameters again.
    let lt = generics::static_lifetime();
    let (args, where_) = (type_params.args(), type_params.where_with(Some(&lt)));
    let names = &type_params.names;
    quote! {
        impl<'de, #(#names),*> #serde::Deserialize<'de> for #job #args #where_ {
            fn deserialize<__D: #serde::Deserializer<'de>>(__d: __D) -> ::core::result::Result<Self, __D::Error> {
                struct __Visitor #args (::core::marker::PhantomData<fn() -> #job #args>);
                impl<'de, #(#names),*> #serde::de::Visitor<'de> for __Visitor #args #where_ {
                    type Value = #job #args;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str("the parameters of a call")
                    }
                    #[allow(unused_mut, unused_variables)]
                    fn visit_seq<__A: #serde::de::SeqAccess<'de>>(self, mut __a: __A) -> ::core::result::Result<#job #args, __A::Error> {
                        ::core::result::Result::Ok(#job(#( #private::#readers(&mut __a, #positions)? ),*))
                    }
                }
                #serde::Deserializer::deserialize_tuple(__d, #arity, __Visitor(::core::marker::PhantomData))
            }
        }
    }
}

/// The `Job::Codec` of results that travel (serde's).
pub(super) fn serde_codec(krate: &syn::Path) -> TokenStream {
    quote!(type Codec = #krate::__private::SerdeCodec;)
}
