//! Custom options Wire accepts and `protoc` refuses: a dotted option path through a repeated message
//! field (`[(wrapper).tags.name = "a", (wrapper).tags.name = "b"]`, Confluent's
//! `testNormalizationWithRepeatedNestedCustomOptions`, eec1a8b62bf). Confluent parses option values
//! without interpreting them, so such a schema registers; here the linker is given the files again
//! without dotted custom options (their values are not checked, as in Confluent), and the stored text
//! is rendered from the parse as written, options included.

use protox::prost_reflect::prost_types::{
    DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto, UninterpretedOption,
};

/// Whether `error` is the linker refusing a dotted path through a repeated message field.
pub(super) fn is_dotted_path_through_repeated(error: &protox::Error) -> bool {
    let message = error.to_string();
    message.starts_with("cannot set field for option") && message.contains("of type 'repeated ")
}

/// `file` without its dotted custom options (`(ext).a.b = v`), everywhere an option list can be.
pub(super) fn drop_dotted_custom_options(file: &mut FileDescriptorProto) {
    if let Some(o) = file.options.as_mut() {
        keep_undotted(&mut o.uninterpreted_option);
    }
    file.message_type.iter_mut().for_each(message);
    file.enum_type.iter_mut().for_each(enumeration);
    file.extension.iter_mut().for_each(field);
    for service in &mut file.service {
        if let Some(o) = service.options.as_mut() {
            keep_undotted(&mut o.uninterpreted_option);
        }
        for method in &mut service.method {
            if let Some(o) = method.options.as_mut() {
                keep_undotted(&mut o.uninterpreted_option);
            }
        }
    }
}

fn keep_undotted(options: &mut Vec<UninterpretedOption>) {
    options.retain(|o| !(o.name.len() > 1 && o.name.first().is_some_and(|part| part.is_extension)));
}

/// Messages nest as deep as the text (bounded by the depth limit checked before compiling).
fn message(m: &mut DescriptorProto) {
    if let Some(o) = m.options.as_mut() {
        keep_undotted(&mut o.uninterpreted_option);
    }
    m.field.iter_mut().for_each(field);
    m.extension.iter_mut().for_each(field);
    for oneof in &mut m.oneof_decl {
        if let Some(o) = oneof.options.as_mut() {
            keep_undotted(&mut o.uninterpreted_option);
        }
    }
    m.nested_type.iter_mut().for_each(message);
    m.enum_type.iter_mut().for_each(enumeration);
}

fn field(f: &mut FieldDescriptorProto) {
    if let Some(o) = f.options.as_mut() {
        keep_undotted(&mut o.uninterpreted_option);
    }
}

fn enumeration(e: &mut EnumDescriptorProto) {
    if let Some(o) = e.options.as_mut() {
        keep_undotted(&mut o.uninterpreted_option);
    }
    for value in &mut e.value {
        if let Some(o) = value.options.as_mut() {
            keep_undotted(&mut o.uninterpreted_option);
        }
    }
}
