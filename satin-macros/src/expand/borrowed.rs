//! The job type of a function that borrows parameters: the job holds the
//! references, and its owned form is what another node decodes.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Ident, Type};

use super::job_type::{deserialize_impl, registration, serde_codec};
use super::params::{owned_form, ParamKind};
use crate::generics::{self, TypeParams};

/// The job type of a function that borrows parameters: the job holds the
/// references, and a second type, its owned form, is what another node
/// decodes (see `satin::Travel`).
pub(super) struct Borrowed<'a> {
    pub(super) job: &'a Ident,
    pub(super) krate: &'a syn::Path,
    pub(super) serde_crate: &'a str,
    pub(super) vis: &'a syn::Visibility,
    pub(super) output: &'a Type,
    pub(super) fields: &'a [Ident],
    pub(super) type_params: &'a TypeParams,
}

impl Borrowed<'_> {
    pub(super) fn job_type(
        &self,
        name: &Ident,
        types: &[&Type],
        kinds: &[ParamKind],
        fn_id: &str,
        run_fns: &TokenStream,
        policy: Option<&TokenStream>,
    ) -> TokenStream {
        let Borrowed { job, krate, vis, output, fields, type_params, .. } = *self;
        let codec = serde_codec(krate);
        let owned = format_ident!("__SatinOwned_{}", name);
        let lt = syn::Lifetime::new("'__satin", Span::call_site());
        // The job's generics (its lifetime, then the type parameters), the
        // owned form's, and their bounds.
        let job_params = type_params.params(Some(&lt));
        let job_static = type_params.params(Some(&generics::static_lifetime()));
        let owned_args = type_params.args();
        let job_where = type_params.where_with(Some(&lt));
        let owned_where = type_params.where_with(Some(&generics::static_lifetime()));
        // Every lifetime of the signature becomes the job's one lifetime.
        let field_types: Vec<Type> = types.iter().map(|t| generics::with_lifetime((*t).clone(), &lt)).collect();
        // What another node decodes: named as written where the borrowed
        // type holds no reference (`&[T]` → `Vec<T>`, `&str` → `String`,
        // `&T` → `T`), so that a type that cannot travel fails `Param`'s
        // bound alone; through `Travel` otherwise.
        // (a shared borrow decodes as `LentParam`: the data, or this
        // node's own copy of a value of the run's root).
        let owned_form = |u: &Type| owned_form(u).map(|o| quote!(#o));
        let owned_types: Vec<TokenStream> = types
            .iter()
            .zip(kinds)
            .map(|(t, k)| match k {
                ParamKind::Owned => quote!(#t),
                ParamKind::Shared(u) => {
                    let data = owned_form(u).unwrap_or_else(|| quote!(<#u as #krate::Travel>::Owned));
                    quote!(#krate::__private::LentParam<#u, #data>)
                }
                ParamKind::Mut(u) => owned_form(u).unwrap_or_else(|| quote!(<#u as #krate::Travel>::Owned)),
            })
            .collect();
        let named_owned = kinds.iter().all(|k| match k {
            ParamKind::Owned | ParamKind::Shared(_) => true,
            ParamKind::Mut(u) => owned_form(u).is_some(),
        });
        let borrow_args: Vec<TokenStream> = fields
            .iter()
            .zip(kinds)
            .map(|(f, k)| match k {
                ParamKind::Owned => quote!(#f),
                ParamKind::Shared(u) if owned_form(u).is_some() => quote!(#f.get(|__satin_o| __satin_o)),
                ParamKind::Shared(u) => quote!(#f.get(<#u as #krate::Travel>::borrow)),
                ParamKind::Mut(u) if owned_form(u).is_some() => quote!(&mut #f),
                ParamKind::Mut(u) => quote!(<#u as #krate::TravelMut>::borrow_mut(&mut #f)),
            })
            .collect();
        let serialize = self.serialize_impl(kinds, &job_params, &job_where);
        let owned_deserialize = self.owned_deserialize_impl(&owned, &owned_args, &owned_types, named_owned, kinds);
        let (mutates, encode, binding) = self.write_back(kinds);
        let entry = quote!(#krate::__private::JobFn::borrowing::<#owned #owned_args>()#policy);
        let (instance, submit) = registration(krate, type_params, &quote!(#owned #owned_args), &entry);
        quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #vis struct #job #job_params (#(pub #field_types),*);

            #serialize

            impl #job_params #krate::Job for #job #job_params #job_where {
                type Output = #output;
                #codec
                const FN_ID: &'static str = concat!(module_path!(), #fn_id);
                #instance
                #mutates
                #run_fns
            }

            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #vis struct #owned #owned_args (#(pub #owned_types),*);

            #owned_deserialize

            impl #owned_args #krate::OwnedJob for #owned #owned_args #owned_where {
                const FN_ID: &'static str = <#job #job_static as #krate::Job>::FN_ID;
                fn run_encoded(self, ctx: &#krate::__private::Ctx<'_>) -> ::std::vec::Vec<u8> {
                    let #owned(#(#binding),*) = self;
                    let __satin_job = #job(#(#borrow_args),*);
                    // What it borrows stays here until it returns: keyed once.
                    let __satin_pinned = #krate::__private::pin(&__satin_job);
                    let __satin_out = #krate::Job::run(__satin_job, ctx);
                    #encode.expect("postcard encodes any serde value into a Vec")
                }
            }

            #submit
        }
    }

    /// `Serialize` of the job: the call travels as the tuple of what it
    /// borrows (as the derive wrote it), each field through a bound with
    /// the project's message.
    fn serialize_impl(&self, kinds: &[ParamKind], job_params: &TokenStream, job_where: &TokenStream) -> TokenStream {
        let Borrowed { job, krate, .. } = *self;
        let arity = kinds.len();
        let serde = quote!(#krate::__private::serde);
        let ser_fields: Vec<TokenStream> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let i = syn::Index::from(i);
                match k {
                    ParamKind::Owned => quote!(#krate::__private::ser_field(&mut __t, &self.#i)?;),
                    ParamKind::Shared(_) => quote!(#krate::__private::ser_lent(&mut __t, self.#i)?;),
                    ParamKind::Mut(_) => quote!(#krate::__private::ser_lent_mut(&mut __t, &*self.#i)?;),
                }
            })
            .collect();
        let serialize = quote! {
            impl #job_params #serde::Serialize for #job #job_params #job_where {
                fn serialize<__S: #serde::Serializer>(&self, __s: __S) -> ::core::result::Result<__S::Ok, __S::Error> {
                    let mut __t = #serde::Serializer::serialize_tuple(__s, #arity)?;
                    #(#ser_fields)*
                    #serde::ser::SerializeTuple::end(__t)
                }
            }
        };
        serialize
    }

    /// For a call that changes its `&mut` parameters: the `Job` items that
    /// take their contents in on arrival (`accept`), how the result goes
    /// out with them, and how the owned form binds its fields.
    fn write_back(&self, kinds: &[ParamKind]) -> (TokenStream, TokenStream, Vec<TokenStream>) {
        let Borrowed { job, krate, output, fields, .. } = *self;
        let owned_form = |u: &Type| owned_form(u).map(|o| quote!(#o));
        let muts: Vec<(&Ident, &Type)> = fields
            .iter()
            .zip(kinds)
            .filter_map(|(f, k)| match k {
                ParamKind::Mut(u) => Some((f, u)),
                _ => None,
            })
            .collect();
        let mut_fields: Vec<&Ident> = muts.iter().map(|(f, _)| *f).collect();
        let mut_owned: Vec<TokenStream> =
            muts.iter().map(|(_, u)| owned_form(u).unwrap_or_else(|| quote!(<#u as #krate::Travel>::Owned))).collect();
        let mut_elems: Vec<&Type> = muts.iter().map(|(_, u)| *u).collect();
        let values: Vec<Ident> = (0..muts.len()).map(|i| format_ident!("__satin_m{}", i)).collect();
        let binding: Vec<TokenStream> = fields
            .iter()
            .zip(kinds)
            .map(|(f, k)| match k {
                ParamKind::Mut(_) => quote!(mut #f),
                _ => quote!(#f),
            })
            .collect();
        let postcard = quote!(#krate::__private::postcard);
        // A call that changes its `&mut` parameters sends their contents
        // back with its result, and takes them in on arrival.
        let (mutates, encode) = if muts.is_empty() {
            (quote!(), quote!(#postcard::to_allocvec(&__satin_out)))
        } else {
            let accept = quote! {
                const MUTATES: bool = true;
                fn accept(self, outcome: &[u8]) -> ::core::result::Result<#output, #krate::AcceptError> {
                    let (__satin_value, #(#values),*): (#output, #(#mut_owned),*) = #postcard::from_bytes(outcome)?;
                    #[allow(unused_variables)]
                    let #job(#(#fields),*) = self;
                    #(<#mut_elems as #krate::TravelMut>::write_back(#mut_fields, #values)?;)*
                    ::core::result::Result::Ok(__satin_value)
                }
            };
            (accept, quote!(#postcard::to_allocvec(&(&__satin_out, #(&#mut_fields),*))))
        };
        (mutates, encode, binding)
    }

    /// `Deserialize` of the owned form: field by field through `Param` when
    /// every owned type is named as written (see `owned_serde_impls`),
    /// through a derived tuple of `Travel::Owned` types otherwise.
    fn owned_deserialize_impl(
        &self,
        owned: &Ident,
        owned_args: &TokenStream,
        owned_types: &[TokenStream],
        named_owned: bool,
        kinds: &[ParamKind],
    ) -> TokenStream {
        let Borrowed { krate, serde_crate, fields, type_params, .. } = *self;
        let serde = quote!(#krate::__private::serde);
        if named_owned {
            // A shared borrow's data is read through its own bound (`O:
            // Param`), so that a type that cannot travel fails it alone.
            let readers: Vec<Ident> = kinds
                .iter()
                .map(|k| match k {
                    ParamKind::Shared(_) => format_ident!("de_lent"),
                    _ => format_ident!("de_field"),
                })
                .collect();
            deserialize_impl(krate, owned, &readers, type_params)
        } else {
            quote! {
                impl<'de> #serde::Deserialize<'de> for #owned #owned_args {
                    fn deserialize<__D: #serde::Deserializer<'de>>(__d: __D) -> ::core::result::Result<Self, __D::Error> {
                        #[derive(#serde::Deserialize)]
                        #[serde(crate = #serde_crate)]
                        struct __Fields(#(#owned_types),*);
                        let __Fields(#(#fields),*) = <__Fields as #serde::Deserialize>::deserialize(__d)?;
                        ::core::result::Result::Ok(#owned(#(#fields),*))
                    }
                }
            }
        }
    }
}
