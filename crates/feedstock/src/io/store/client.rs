//! A bucket's client, built from the environment and the options, with
//! the settings checked first so that a mistake is named before any
//! request; and `object_store`'s errors as ours.

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::multipart::MultipartStore;
use object_store::{
    ClientConfigKey, ObjectStore, ObjectStoreScheme, RetryConfig,
};
use url::Url;

use super::{Client, Inner};
use crate::error::{Error, Kind, Result};

impl Inner {
    /// The client of `url`'s bucket (or host).
    ///
    /// # Errors
    ///
    /// Named after `url`: [`Kind::PermissionDenied`] for an S3 bucket with
    /// no credentials configured ([`check_s3`]), [`Kind::InvalidArgument`]
    /// for a setting the store cannot use, [`Kind::Unimplemented`] for a
    /// scheme no store serves.
    pub(super) fn build(
        &self,
        scheme: ObjectStoreScheme,
        url: &Url,
    ) -> Result<Client> {
        let named = |e: object_store::Error| {
            // The builder's message names the missing setting, never a
            // secret value.
            Error::invalid_argument(format!("cannot configure the store: {e}"))
                .with_file(url.as_str())
        };
        // Requests are retried here, not inside object_store, so that
        // every retry is counted and resumes at the exact byte.
        let retry = RetryConfig {
            max_retries: 0,
            ..RetryConfig::default()
        };
        // No `with_client_options` here: it would replace the client
        // settings `from_env` read (AWS_ALLOW_HTTP among them).
        let opts = &self.opts.options;
        macro_rules! configure {
            ($builder:expr) => {{
                let mut b = $builder.with_url(url.as_str()).with_retry(retry);
                for (k, v) in opts {
                    if let Ok(key) = k.to_ascii_lowercase().parse() {
                        b = b.with_config(key, v.clone());
                    }
                }
                b
            }};
        }
        macro_rules! client {
            ($builder:expr) => {{
                let store = Arc::new($builder.build().map_err(named)?);
                Client {
                    store: Arc::clone(&store) as Arc<dyn ObjectStore>,
                    multipart: Some(store as Arc<dyn MultipartStore>),
                }
            }};
        }
        Ok(match scheme {
            ObjectStoreScheme::AmazonS3 => {
                let b = configure!(AmazonS3Builder::from_env());
                check_s3(&b).map_err(|e| e.with_file(url.as_str()))?;
                client!(b)
            }
            ObjectStoreScheme::GoogleCloudStorage => {
                client!(configure!(GoogleCloudStorageBuilder::from_env()))
            }
            ObjectStoreScheme::MicrosoftAzure => {
                client!(configure!(MicrosoftAzureBuilder::from_env()))
            }
            ObjectStoreScheme::Http => {
                let base = &url[..url::Position::BeforePath];
                // An `http://` URL is the caller's choice of plain HTTP,
                // which the client refuses by default (with no more than
                // "builder error" on the first request); the options can
                // still say otherwise.
                let mut b = HttpBuilder::new()
                    .with_url(base)
                    .with_retry(retry)
                    .with_config(ClientConfigKey::AllowHttp, "true");
                for (k, v) in opts {
                    if let Ok(key) = k.to_ascii_lowercase().parse() {
                        b = b.with_config(key, v.clone());
                    }
                }
                Client {
                    store: Arc::new(b.build().map_err(named)?),
                    multipart: None,
                }
            }
            other => {
                return Err(Error::unimplemented(format!(
                    "the {other:?} scheme is not supported"
                ))
                .with_file(url.as_str()))
            }
        })
    }
}

/// The values `object_store` takes for a boolean setting, as it parses
/// them (case aside).
fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" | "y" => Some(true),
        "0" | "false" | "off" | "no" | "n" => Some(false),
        _ => None,
    }
}

/// The S3 settings, checked before the client is built, so that what
/// would fail on the first request (or worse, ask another service) is
/// named instead:
///
/// - `AWS_ALLOW_HTTP` that is not a boolean, or false (its default) with
///   an `http://` endpoint: the request would fail with no more than
///   "builder error".
/// - No credentials: with no access key, no web identity, no container
///   credentials and no signature skipping, `object_store` asks the EC2
///   instance-metadata service at 169.254.169.254 for credentials, and
///   off EC2 that fails (after a timeout, on some networks) with a 403
///   or a connection error about a URL the user never gave. feedstock
///   asks it only when `AWS_METADATA_ENDPOINT` (or `AWS_IMDSV1_FALLBACK`)
///   says to, and otherwise fails here naming the variables that give
///   credentials.
///
/// # Errors
///
/// [`Kind::InvalidArgument`] for `AWS_ALLOW_HTTP`, a half key pair or a
/// bad boolean; [`Kind::PermissionDenied`] when no credentials are
/// configured.
pub(super) fn check_s3(b: &AmazonS3Builder) -> Result<()> {
    use AmazonS3ConfigKey as K;
    let get = |k: K| b.get_config_value(&k).filter(|v| !v.is_empty());
    let flag = |k: K, var: &str| -> Result<bool> {
        match get(k) {
            None => Ok(false),
            Some(v) => parse_bool(&v).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{var} (or the store option {}) is {v:?}: it must be \
                     true or false (1, yes, on and 0, no, off are taken too)",
                    var.to_ascii_lowercase()
                ))
            }),
        }
    };
    let allow_http =
        flag(K::Client(ClientConfigKey::AllowHttp), "AWS_ALLOW_HTTP")?;
    let endpoint = get(K::S3Endpoint).or_else(|| get(K::Endpoint));
    if let Some(e) = &endpoint {
        // Bytes: the endpoint is the user's, and its seventh byte may fall
        // inside a character.
        let plain = e
            .as_bytes()
            .get(..7)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"http://"));
        if plain && !allow_http {
            return Err(Error::invalid_argument(format!(
                "the endpoint {e} is plain HTTP, which S3 clients refuse \
                 unless AWS_ALLOW_HTTP=true (or the store option \
                 aws_allow_http=true) allows it"
            )));
        }
    }
    let skip_signature = flag(K::SkipSignature, "AWS_SKIP_SIGNATURE")?;
    let imdsv1 = flag(K::ImdsV1Fallback, "AWS_IMDSV1_FALLBACK")?;
    match (get(K::AccessKeyId), get(K::SecretAccessKey)) {
        (Some(_), Some(_)) => return Ok(()),
        (Some(_), None) => {
            return Err(Error::invalid_argument(
                "AWS_ACCESS_KEY_ID is set but not AWS_SECRET_ACCESS_KEY: \
                 give both (or the store options aws_access_key_id and \
                 aws_secret_access_key)",
            ))
        }
        (None, Some(_)) => {
            return Err(Error::invalid_argument(
                "AWS_SECRET_ACCESS_KEY is set but not AWS_ACCESS_KEY_ID: \
                 give both (or the store options aws_access_key_id and \
                 aws_secret_access_key)",
            ))
        }
        (None, None) => {}
    }
    let web_identity =
        get(K::WebIdentityTokenFile).is_some() && get(K::RoleArn).is_some();
    let container = get(K::ContainerCredentialsRelativeUri).is_some()
        || (get(K::ContainerCredentialsFullUri).is_some()
            && get(K::ContainerAuthorizationTokenFile).is_some());
    let instance = get(K::MetadataEndpoint).is_some() || imdsv1;
    if web_identity || container || instance || skip_signature {
        return Ok(());
    }
    Err(Error::new(
        Kind::PermissionDenied,
        "no S3 credentials are configured: set AWS_ACCESS_KEY_ID and \
         AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary ones), \
         or the store options aws_access_key_id and aws_secret_access_key; \
         or AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, or \
         AWS_CONTAINER_CREDENTIALS_RELATIVE_URI; on EC2, \
         AWS_METADATA_ENDPOINT=http://169.254.169.254 takes the instance's \
         role; for a public bucket, AWS_SKIP_SIGNATURE=true sends unsigned \
         requests (profiles in ~/.aws are not read)",
    ))
}

/// Whether a request that failed with `e` may succeed if sent again.
pub(super) fn is_transient(e: &object_store::Error) -> bool {
    use object_store::Error as E;
    // Generic covers the transport and server errors (connection refused or
    // reset, timeouts, 5xx); everything else is an answer about the object.
    matches!(e, E::Generic { .. })
}

/// An `object_store` error as ours, naming the URL and offset, and
/// classified: missing is NotFound, denied is PermissionDenied.
pub(super) fn store_error(
    url: &str,
    offset: Option<u64>,
    retries: u32,
    e: object_store::Error,
) -> Error {
    use object_store::Error as E;
    let kind = match &e {
        E::NotFound { .. } => Kind::NotFound,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            Kind::PermissionDenied
        }
        E::InvalidPath { .. } => Kind::InvalidArgument,
        E::NotSupported { .. } | E::NotImplemented { .. } => {
            Kind::Unimplemented
        }
        E::AlreadyExists { .. } | E::Precondition { .. } => {
            Kind::FailedPrecondition
        }
        _ => Kind::Unknown,
    };
    let after = if retries > 0 {
        format!(" after {retries} retries")
    } else {
        String::new()
    };
    let err = Error::new(
        kind,
        format!("object store request failed{after}: {}", with_causes(&e)),
    )
    .with_file(url);
    match offset {
        Some(o) => err.with_offset(o),
        None => err,
    }
}

/// `e` and the causes its message leaves out ("error sending request"
/// alone does not say that the connection was refused), each once.
fn with_causes(e: &object_store::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let said = c.to_string();
        if !said.is_empty() && !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A builder with `settings` only (no environment).
    fn s3(settings: &[(&str, &str)]) -> AmazonS3Builder {
        let mut b = AmazonS3Builder::new()
            .with_bucket_name("b")
            .with_endpoint("http://127.0.0.1:1")
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
                "true",
            );
        for (k, v) in settings {
            b = b.with_config(k.parse().unwrap(), *v);
        }
        b
    }

    #[test]
    fn an_s3_bucket_without_credentials_fails_before_any_request() {
        let e = check_s3(&s3(&[])).unwrap_err();
        assert_eq!(e.kind(), Kind::PermissionDenied, "{e}");
        for name in [
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "aws_access_key_id",
            "AWS_METADATA_ENDPOINT",
            "AWS_SKIP_SIGNATURE",
        ] {
            assert!(e.message().contains(name), "{name}: {e}");
        }
        // A multibyte endpoint is a setting like another, never a panic.
        check_s3(&s3(&[
            ("aws_endpoint", "https:é//127.0.0.1:1"),
            ("aws_access_key_id", "k"),
            ("aws_secret_access_key", "s"),
        ]))
        .unwrap();
        let e = check_s3(&s3(&[("aws_access_key_id", "k")])).unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument, "{e}");
        assert!(e.message().contains("not AWS_SECRET_ACCESS_KEY"), "{e}");
        // Every source of credentials the client knows is enough.
        for ok in [
            &[("aws_access_key_id", "k"), ("aws_secret_access_key", "s")][..],
            &[("aws_metadata_endpoint", "http://169.254.169.254")],
            &[("aws_imdsv1_fallback", "true")],
            &[("aws_skip_signature", "true")],
            &[("aws_container_credentials_relative_uri", "/v2/x")],
            &[("aws_web_identity_token_file", "/t"), ("aws_role_arn", "r")],
        ] {
            check_s3(&s3(ok)).unwrap_or_else(|e| panic!("{ok:?}: {e}"));
        }
    }

    #[test]
    fn a_store_error_says_the_causes_its_message_leaves_out_once() {
        #[derive(Debug)]
        struct Sending(std::io::Error);
        impl std::fmt::Display for Sending {
            fn fmt(
                &self,
                f: &mut std::fmt::Formatter<'_>,
            ) -> std::fmt::Result {
                f.write_str("error sending request")
            }
        }
        impl std::error::Error for Sending {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused",
        );
        let e = object_store::Error::Generic {
            store: "S3",
            source: Box::new(Sending(refused)),
        };
        let e = store_error("s3://b/k", Some(7), 2, e);
        assert_eq!(e.kind(), Kind::Unknown);
        assert_eq!(
            e.to_string(),
            "Unknown: object store request failed after 2 retries: Generic \
             S3 error: error sending request: Connection refused (file \
             s3://b/k, offset 7)"
        );
    }

    #[test]
    fn aws_allow_http_is_named_when_it_is_not_a_boolean_or_refuses_http() {
        let keys =
            [("aws_access_key_id", "k"), ("aws_secret_access_key", "s")];
        let with = |v: &str| {
            let mut b = s3(&keys);
            b = b.with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
                v,
            );
            check_s3(&b)
        };
        let e = with("maybe").unwrap_err();
        assert_eq!(e.kind(), Kind::InvalidArgument);
        assert!(e.message().contains("AWS_ALLOW_HTTP"), "{e}");
        assert!(e.message().contains("\"maybe\""), "{e}");
        assert!(e.message().contains("true or false"), "{e}");
        let e = with("false").unwrap_err();
        assert!(e.message().contains("http://127.0.0.1:1"), "{e}");
        assert!(e.message().contains("AWS_ALLOW_HTTP=true"), "{e}");
        with("TRUE").unwrap();
        with("1").unwrap();
        // An https endpoint needs no permission.
        let b = s3(&keys)
            .with_endpoint("https://s3.example.com")
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp),
                "false",
            );
        check_s3(&b).unwrap();
    }
}
