//! Enums whose every variant has one fixed name on the wire (`AVRO`, `READWRITE`, `admin`, ...).

/// Gives a fieldless enum, from one list of its variants and their wire names, `as_str` (the
/// variant's name), `from_wire_name` (the variant of exactly that name) and `Display` (the name).
/// Each enum keeps its own `FromStr`: its case rule and its error are part of its contract.
///
/// Two forms: an enum declared elsewhere, `wire_names!(Color { Red = "RED", Green = "GREEN" });`,
/// or the whole declaration inside the macro, for an enum that derives serde's `Serialize` and
/// `Deserialize`: each variant is then (de)serialized by its wire name.
///
/// ```
/// use serde::{Deserialize, Serialize};
///
/// registry_schema::wire_names! {
///     #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
///     enum Color {
///         Red = "RED",
///         Green = "GREEN",
///     }
/// }
/// assert_eq!(Color::Green.as_str(), "GREEN");
/// assert_eq!(Color::from_wire_name("RED"), Some(Color::Red));
/// assert_eq!(Color::from_wire_name("red"), None);
/// assert_eq!(Color::Red.to_string(), "RED");
/// assert_eq!(serde_json::to_string(&Color::Green).ok().as_deref(), Some("\"GREEN\""));
/// ```
#[macro_export]
macro_rules! wire_names {
    ($enum:ident { $($variant:ident = $name:literal),+ $(,)? }) => {
        impl $enum {
            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }

            /// The variant whose wire name is exactly `name` (case-sensitive).
            pub fn from_wire_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some($enum::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $enum {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
    (
        $(#[$attribute:meta])*
        $visibility:vis enum $enum:ident {
            $($(#[$variant_attribute:meta])* $variant:ident = $name:literal),+ $(,)?
        }
    ) => {
        $(#[$attribute])*
        $visibility enum $enum {
            $($(#[$variant_attribute])* #[serde(rename = $name)] $variant,)+
        }

        $crate::wire_names!($enum { $($variant = $name),+ });
    };
}
