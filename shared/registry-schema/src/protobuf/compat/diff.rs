//! The diff walk: Confluent's `SchemaDiff`/`MessageSchemaDiff`/`FieldSchemaDiff`/
//! `EnumSchemaDiff` over the schemas as written, with `Context`'s name resolution (package, then
//! enclosing message scopes, then the bare name) across the files each schema imports.

use super::{Change, ChangeType};
use crate::SchemaError;
use crate::limits::{Budget, Meter};
use crate::protobuf::ProtobufSchema;
use crate::protobuf::source::{self, Ty};
use protox::prost_reflect::prost_types::field_descriptor_proto::Label;
use protox::prost_reflect::prost_types::{DescriptorProto, EnumDescriptorProto, FieldDescriptorProto};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

mod fields;

/// Every change from `original` to `update`, in a stable order (unbounded work; see [`diff_within`]).
pub fn diff(original: &ProtobufSchema, update: &ProtobufSchema) -> Vec<Change> {
    diff_within(original, update, &mut Meter::unlimited(Budget::Work)).unwrap_or_default()
}

/// [`diff`] charging `work`: each message or enum, field and change counts one unit. Messages of
/// imported files are compared again wherever a field uses them (as Confluent does), so a reference
/// DAG across files is bounded by this budget, not by the walk.
pub fn diff_within(
    original: &ProtobufSchema,
    update: &ProtobufSchema,
    work: &mut Meter,
) -> Result<Vec<Change>, SchemaError> {
    let sides = [Side::of(original), Side::of(update)];
    let spend = Spend { used: Cell::new(0), limit: work.remaining() };
    let mut ctx = Ctx::new(&sides, &spend);
    ctx.package = [original.written.package().to_string(), update.written.package().to_string()];
    if ctx.package[0] != ctx.package[1] {
        ctx.add(ChangeType::PackageChanged);
    }
    let lists = [Types::of_file(&original.written), Types::of_file(&update.written)];
    ctx.compare_types(&lists);
    work.charge(spend.used.get())?;
    Ok(ctx.changes)
}

/// Work spent by one diff and its nested contexts; past `limit` the walk stops descending.
struct Spend {
    used: Cell<u64>,
    limit: u64,
}

impl Spend {
    fn charge(&self, units: usize) {
        self.used.set(self.used.get().saturating_add(units as u64));
    }

    fn spent(&self) -> bool {
        self.used.get() > self.limit
    }
}

/// A message or enum found by its full name.
#[derive(Clone, Copy)]
enum Def<'a> {
    Message(&'a DescriptorProto, bool),
    Enum,
}

#[derive(Clone, Copy)]
struct TypeInfo<'a> {
    package: &'a str,
    local: bool,
    def: Def<'a>,
}

/// Every type one schema can name, by full name without the leading dot.
struct Side<'a> {
    types: HashMap<String, TypeInfo<'a>>,
}

impl<'a> Side<'a> {
    fn of(schema: &'a ProtobufSchema) -> Side<'a> {
        let mut side = Side { types: HashMap::new() };
        for file in schema.dependency_files.iter() {
            side.collect(file.package(), file.package(), &Types::of_file(file), false);
        }
        let file = &schema.written;
        side.collect(file.package(), file.package(), &Types::of_file(file), true);
        side
    }

    fn collect(&mut self, scope: &str, package: &'a str, types: &Types<'a>, local: bool) {
        let prefix = if scope.is_empty() { String::new() } else { format!("{scope}.") };
        for message in types.all_messages() {
            let name = format!("{prefix}{}", message.name());
            let def = Def::Message(message, types.proto3);
            self.types.insert(name.clone(), TypeInfo { package, local, def });
            self.collect(&name, package, &Types::of_message(message, types.proto3), local);
        }
        for enumeration in types.enums {
            let def = Def::Enum;
            self.types.insert(format!("{prefix}{}", enumeration.name()), TypeInfo { package, local, def });
        }
    }
}

/// The messages and enums declared at one level (file or message).
struct Types<'a> {
    messages: &'a [DescriptorProto],
    enums: &'a [EnumDescriptorProto],
    proto3: bool,
}

impl<'a> Types<'a> {
    fn of_file(file: &'a protox::prost_reflect::prost_types::FileDescriptorProto) -> Types<'a> {
        Types { messages: &file.message_type, enums: &file.enum_type, proto3: source::is_proto3(file) }
    }

    fn of_message(message: &'a DescriptorProto, proto3: bool) -> Types<'a> {
        Types { messages: &message.nested_type, enums: &message.enum_type, proto3 }
    }

    /// Every message, map entries included (they resolve `map` fields of descriptor-built files).
    fn all_messages(&self) -> impl Iterator<Item = &'a DescriptorProto> {
        self.messages.iter()
    }

    /// The messages Wire lists for text: no synthesized map entries.
    fn declared_messages(&self) -> impl Iterator<Item = &'a DescriptorProto> {
        self.messages.iter().filter(|m| !source::is_map_entry(m))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Scalar,
    Map,
    Message,
}

struct Ctx<'s, 'a> {
    sides: &'s [Side<'a>; 2],
    spend: &'s Spend,
    package: [String; 2],
    path: Vec<String>,
    names: Vec<String>,
    visiting: Vec<*const DescriptorProto>,
    changes: Vec<Change>,
}

impl<'s, 'a> Ctx<'s, 'a> {
    fn new(sides: &'s [Side<'a>; 2], spend: &'s Spend) -> Self {
        Ctx {
            sides,
            spend,
            package: Default::default(),
            path: Vec::new(),
            names: Vec::new(),
            visiting: Vec::new(),
            changes: Vec::new(),
        }
    }

    fn add(&mut self, kind: ChangeType) {
        self.spend.charge(1);
        self.changes.push(Change { kind, path: format!("#/{}", self.path.join("/")) });
    }

    fn in_path<R>(&mut self, segment: String, named: bool, body: impl FnOnce(&mut Self) -> R) -> R {
        self.path.push(segment.clone());
        if named {
            self.names.push(segment);
        }
        let result = body(self);
        if named {
            self.names.pop();
        }
        self.path.pop();
        result
    }

    /// `Context.resolve`: the full name `name` means on side `s`, if that side knows it.
    fn resolve(&self, name: &str, s: usize) -> Option<String> {
        let types = &self.sides[s].types;
        if let Some(exact) = name.strip_prefix('.') {
            return types.contains_key(exact).then(|| exact.to_string());
        }
        let mut prefix: Vec<&str> = self.package[s].split('.').filter(|p| !p.is_empty()).collect();
        prefix.extend(self.names.iter().map(String::as_str));
        while !prefix.is_empty() {
            let candidate = format!("{}.{name}", prefix.join("."));
            if types.contains_key(&candidate) {
                return Some(candidate);
            }
            prefix.pop();
        }
        types.contains_key(name).then(|| name.to_string())
    }

    fn lookup(&self, name: &str, s: usize) -> Option<TypeInfo<'a>> {
        self.resolve(name, s).and_then(|full| self.sides[s].types.get(&full).copied())
    }

    fn compare_types(&mut self, lists: &[Types<'a>; 2]) {
        self.spend
            .charge(lists[0].messages.len() + lists[1].messages.len() + lists[0].enums.len() + lists[1].enums.len());
        if self.spend.spent() {
            return;
        }
        let index = |t: &Types<'a>| -> BTreeMap<String, (usize, &'a DescriptorProto)> {
            t.declared_messages().enumerate().map(|(i, m)| (m.name().to_string(), (i, m))).collect()
        };
        let messages = [index(&lists[0]), index(&lists[1])];
        let proto3 = [lists[0].proto3, lists[1].proto3];
        self.compare_named(&messages, [ChangeType::MessageRemoved, ChangeType::MessageAdded], |ctx, o, u| {
            let ((oi, om), (ui, um)) = (o, u);
            ctx.compare_messages(om, um, proto3);
            if oi != ui {
                ctx.add(ChangeType::MessageMoved);
            }
        });
        let enums = |t: &Types<'a>| -> BTreeMap<String, &'a EnumDescriptorProto> {
            t.enums.iter().map(|e| (e.name().to_string(), e)).collect()
        };
        let enums = [enums(&lists[0]), enums(&lists[1])];
        self.compare_named(&enums, [ChangeType::EnumRemoved, ChangeType::EnumAdded], |ctx, o, u| {
            ctx.compare_enums(o, u)
        });
    }

    /// Compares declarations indexed by name on each side: `[removed, added]` for a name on one
    /// side only, `both` under the name's path for a name on both.
    fn compare_named<T>(
        &mut self,
        sides: &[BTreeMap<String, T>; 2],
        [removed, added]: [ChangeType; 2],
        mut both: impl FnMut(&mut Self, &T, &T),
    ) {
        let names: BTreeSet<&String> = sides[0].keys().chain(sides[1].keys()).collect();
        for name in names {
            self.in_path(name.clone(), true, |ctx| match (sides[0].get(name), sides[1].get(name)) {
                (Some(_), None) => ctx.add(removed),
                (None, Some(_)) => ctx.add(added),
                (Some(o), Some(u)) => both(ctx, o, u),
                (None, None) => {}
            });
        }
    }

    fn compare_enums(&mut self, original: &EnumDescriptorProto, update: &EnumDescriptorProto) {
        let by_number = |e: &EnumDescriptorProto| -> BTreeMap<i32, String> {
            e.value.iter().map(|v| (v.number(), v.name().to_string())).collect()
        };
        let (o, u) = (by_number(original), by_number(update));
        let numbers: BTreeSet<&i32> = o.keys().chain(u.keys()).collect();
        for number in numbers {
            self.in_path(number.to_string(), false, |ctx| match (o.get(number), u.get(number)) {
                (Some(_), None) => ctx.add(ChangeType::EnumConstRemoved),
                (None, Some(_)) => ctx.add(ChangeType::EnumConstAdded),
                (Some(a), Some(b)) if a != b => ctx.add(ChangeType::EnumConstChanged),
                _ => {}
            });
        }
    }

    fn compare_messages(&mut self, original: &'a DescriptorProto, update: &'a DescriptorProto, proto3: [bool; 2]) {
        let key: *const DescriptorProto = original;
        if !self.visiting.contains(&key) {
            self.visiting.push(key);
            self.compare_message_fields([original, update], proto3);
            self.visiting.retain(|k| *k != key);
        }
        self.compare_types(&[Types::of_message(original, proto3[0]), Types::of_message(update, proto3[1])]);
    }

    fn compare_fields(&mut self, m: [&'a DescriptorProto; 2], f: [&'a FieldDescriptorProto; 2], proto3: [bool; 2]) {
        if f[0].name() != f[1].name() {
            self.add(ChangeType::FieldNameChanged);
        }
        let labels = [source::written_label(m[0], f[0], proto3[0]), source::written_label(m[1], f[1], proto3[1])];
        let types = [source::field_type(m[0], f[0]), source::field_type(m[1], f[1])];
        self.compare_labels_and_types(labels, types);
    }

    fn compare_labels_and_types(&mut self, labels: [Option<Label>; 2], types: [Ty; 2]) {
        let types = [self.unwrap_map(&types[0], 0), self.unwrap_map(&types[1], 1)];
        let kinds = [self.kind(&types[0], 0), self.kind(&types[1], 1)];
        if kinds[0] != kinds[1] {
            self.add(ChangeType::FieldKindChanged);
            return;
        }
        match (&types[0], &types[1], kinds[0]) {
            (_, _, Kind::Scalar) => {
                let scalar = [self.scalar_kind(&types[0], 0), self.scalar_kind(&types[1], 1)];
                if scalar[0] != scalar[1] {
                    self.add(ChangeType::FieldScalarKindChanged);
                } else if let [Some(a), Some(b)] = labels
                    && a != b
                {
                    match scalar[0] {
                        "STRING_OR_BYTES" => self.add(ChangeType::FieldStringOrBytesLabelChanged),
                        _ => self.add(ChangeType::FieldNumericLabelChanged),
                    }
                }
            }
            (Ty::Map(ok, ov), Ty::Map(uk, uv), Kind::Map) => {
                self.compare_labels_and_types([None, None], [(**ok).clone(), (**uk).clone()]);
                self.compare_labels_and_types([None, None], [(**ov).clone(), (**uv).clone()]);
            }
            (o, u, _) => self.compare_message_types(&o.to_string(), &u.to_string()),
        }
    }

    /// A named type that is a map entry, as `map<K, V>` (`TypeElementInfo.getMapType`).
    fn unwrap_map(&self, ty: &Ty, s: usize) -> Ty {
        if let Ty::Named(name) = ty
            && let Some(TypeInfo { def: Def::Message(entry, _), .. }) = self.lookup(name, s)
            && source::is_map_entry(entry)
        {
            let part =
                |n| entry.field.iter().find(|f| f.number() == n).map_or(Ty::Scalar("string"), source::simple_type);
            return Ty::Map(Box::new(part(1)), Box::new(part(2)));
        }
        ty.clone()
    }

    fn kind(&self, ty: &Ty, s: usize) -> Kind {
        match ty {
            Ty::Scalar(_) => Kind::Scalar,
            Ty::Map(..) => Kind::Map,
            Ty::Named(name) => match self.lookup(name, s) {
                Some(TypeInfo { def: Def::Enum, .. }) => Kind::Scalar,
                _ => Kind::Message,
            },
        }
    }

    /// Confluent's `ScalarKind` groups (wire-compatible scalars share one).
    fn scalar_kind(&self, ty: &Ty, s: usize) -> &'static str {
        match ty {
            Ty::Scalar("int32" | "int64" | "uint32" | "uint64" | "bool") => "GENERAL_NUMBER",
            Ty::Scalar("sint32" | "sint64") => "SIGNED_NUMBER",
            Ty::Scalar("string" | "bytes") => "STRING_OR_BYTES",
            Ty::Scalar("fixed32" | "sfixed32") => "FIXED32",
            Ty::Scalar("fixed64" | "sfixed64") => "FIXED64",
            Ty::Scalar("float") => "FLOAT",
            Ty::Scalar("double") => "DOUBLE",
            Ty::Named(_) if self.kind(ty, s) == Kind::Scalar => "GENERAL_NUMBER",
            _ => "ANY",
        }
    }

    fn compare_message_types(&mut self, original: &str, update: &str) {
        let (Some(of), Some(uf)) = (self.resolve(original, 0), self.resolve(update, 1)) else {
            if original != update {
                self.add(ChangeType::FieldNamedTypeChanged);
            }
            return;
        };
        let (Some(ot), Some(ut)) = (self.sides[0].types.get(&of).copied(), self.sides[1].types.get(&uf).copied())
        else {
            return;
        };
        let local = |full: &str, t: &TypeInfo<'a>| -> String {
            full.strip_prefix(&format!("{}.", t.package)).unwrap_or(full).to_string()
        };
        let (ol, ul) = (local(&of, &ot), local(&uf, &ut));
        if ol != ul {
            self.add(ChangeType::FieldNamedTypeChanged);
            return;
        }
        if ot.local && ut.local {
            return;
        }
        let (Def::Message(om, o3), Def::Message(um, u3)) = (ot.def, ut.def) else { return };
        let mut sub = Ctx::new(self.sides, self.spend);
        sub.package = [ot.package.to_string(), ut.package.to_string()];
        sub.visiting = self.visiting.clone();
        sub.path = ol.split('.').map(str::to_string).collect();
        sub.names = sub.path.clone();
        sub.compare_messages(om, um, [o3, u3]);
        let incompatible = sub.changes.iter().any(|c| !c.kind.is_compatible());
        self.changes.extend(sub.changes);
        if incompatible {
            self.add(ChangeType::FieldNamedTypeChanged);
        }
    }
}
