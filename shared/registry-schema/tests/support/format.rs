//! What the acceptance tests of one format (JSON Schema, Protobuf) share.

/// Defines, for the format `$schema` (schema type `SchemaType::$variant`, called `$label` in
/// messages): `parse` (strict, no dependencies), `parse_with` (strict, with `dependencies`),
/// `dependency` (a dependency of that type) and `reason` (the reason of a parse error of that type).
macro_rules! format_helpers {
    ($schema:ty, $variant:ident, $label:literal) => {
        fn parse(text: &str) -> Result<$schema, SchemaError> {
            <$schema>::parse(text, &[], Validation::Strict, false)
        }

        fn parse_with(text: &str, dependencies: &[Dependency]) -> Result<$schema, SchemaError> {
            <$schema>::parse(text, dependencies, Validation::Strict, false)
        }

        fn dependency(name: &str, schema: &str) -> Dependency {
            Dependency { name: name.into(), schema_type: SchemaType::$variant, schema: schema.into() }
        }

        fn reason(result: Result<$schema, SchemaError>) -> String {
            match result {
                Err(SchemaError::Parse { schema_type: SchemaType::$variant, reason }) => reason,
                other => panic!(concat!("expected a ", $label, " parse error, got {:?}"), other),
            }
        }
    };
}
