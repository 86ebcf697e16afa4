//! The extra imports Confluent's Protobuf provider resolves without references (its
//! `KNOWN_DEPENDENCIES` beyond `google/protobuf/*`): `confluent/meta.proto`,
//! `confluent/type/decimal.proto` and the `google/type/*.proto` common types.
//!
//! These are our own declarations of those public message and enum shapes (names, field numbers,
//! types); they carry no options or comments, which linking does not need.

/// The declaration for `name`, when it is one of the known imports.
pub(super) fn source(name: &str) -> Option<&'static str> {
    Some(match name {
        "confluent/meta.proto" => CONFLUENT_META,
        "confluent/type/decimal.proto" => CONFLUENT_DECIMAL,
        "google/type/calendar_period.proto" => CALENDAR_PERIOD,
        "google/type/color.proto" => COLOR,
        "google/type/date.proto" => DATE,
        "google/type/datetime.proto" => DATETIME,
        "google/type/dayofweek.proto" => DAY_OF_WEEK,
        "google/type/decimal.proto" => GOOGLE_DECIMAL,
        "google/type/expr.proto" => EXPR,
        "google/type/fraction.proto" => FRACTION,
        "google/type/interval.proto" => INTERVAL,
        "google/type/latlng.proto" => LATLNG,
        "google/type/money.proto" => MONEY,
        "google/type/month.proto" => MONTH,
        "google/type/phone_number.proto" => PHONE_NUMBER,
        "google/type/postal_address.proto" => POSTAL_ADDRESS,
        "google/type/quaternion.proto" => QUATERNION,
        "google/type/timeofday.proto" => TIME_OF_DAY,
        _ => return None,
    })
}

/// A `google/type/*.proto` declaration: proto3, package `google.type`, then `$body`.
macro_rules! google_type {
    ($body:literal) => {
        concat!("syntax = \"proto3\";\npackage google.type;\n", $body)
    };
}

const CONFLUENT_META: &str = r#"syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
message Meta { string doc = 1; map<string, string> params = 2; repeated string tags = 3; }
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
"#;

const CONFLUENT_DECIMAL: &str = r#"syntax = "proto3";
package confluent.type;
message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }
"#;

const CALENDAR_PERIOD: &str = google_type!(
    r#"enum CalendarPeriod {
  CALENDAR_PERIOD_UNSPECIFIED = 0; DAY = 1; WEEK = 2; FORTNIGHT = 3; MONTH = 4; QUARTER = 5; HALF = 6; YEAR = 7;
}
"#
);

const COLOR: &str = google_type!(
    r#"import "google/protobuf/wrappers.proto";
message Color { float red = 1; float green = 2; float blue = 3; google.protobuf.FloatValue alpha = 4; }
"#
);

const DATE: &str = google_type!(
    r#"message Date { int32 year = 1; int32 month = 2; int32 day = 3; }
"#
);

const DATETIME: &str = google_type!(
    r#"import "google/protobuf/duration.proto";
message DateTime {
  int32 year = 1; int32 month = 2; int32 day = 3; int32 hours = 4; int32 minutes = 5; int32 seconds = 6; int32 nanos = 7;
  oneof time_offset { google.protobuf.Duration utc_offset = 8; TimeZone time_zone = 9; }
}
message TimeZone { string id = 1; string version = 2; }
"#
);

const DAY_OF_WEEK: &str = google_type!(
    r#"enum DayOfWeek {
  DAY_OF_WEEK_UNSPECIFIED = 0; MONDAY = 1; TUESDAY = 2; WEDNESDAY = 3; THURSDAY = 4; FRIDAY = 5; SATURDAY = 6;
  SUNDAY = 7;
}
"#
);

const GOOGLE_DECIMAL: &str = google_type!(
    r#"message Decimal { string value = 1; }
"#
);

const EXPR: &str = google_type!(
    r#"message Expr { string expression = 1; string title = 2; string description = 3; string location = 4; }
"#
);

const FRACTION: &str = google_type!(
    r#"message Fraction { int64 numerator = 1; int64 denominator = 2; }
"#
);

const INTERVAL: &str = google_type!(
    r#"import "google/protobuf/timestamp.proto";
message Interval { google.protobuf.Timestamp start_time = 1; google.protobuf.Timestamp end_time = 2; }
"#
);

const LATLNG: &str = google_type!(
    r#"message LatLng { double latitude = 1; double longitude = 2; }
"#
);

const MONEY: &str = google_type!(
    r#"message Money { string currency_code = 1; int64 units = 2; int32 nanos = 3; }
"#
);

const MONTH: &str = google_type!(
    r#"enum Month {
  MONTH_UNSPECIFIED = 0; JANUARY = 1; FEBRUARY = 2; MARCH = 3; APRIL = 4; MAY = 5; JUNE = 6; JULY = 7; AUGUST = 8;
  SEPTEMBER = 9; OCTOBER = 10; NOVEMBER = 11; DECEMBER = 12;
}
"#
);

const PHONE_NUMBER: &str = google_type!(
    r#"message PhoneNumber {
  message ShortCode { string region_code = 1; string number = 2; }
  oneof kind { string e164_number = 1; ShortCode short_code = 2; }
  string extension = 3;
}
"#
);

const POSTAL_ADDRESS: &str = google_type!(
    r#"message PostalAddress {
  int32 revision = 1; string region_code = 2; string language_code = 3; string postal_code = 4;
  string sorting_code = 5; string administrative_area = 6; string locality = 7; string sublocality = 8;
  repeated string address_lines = 9; repeated string recipients = 10; string organization = 11;
}
"#
);

const QUATERNION: &str = google_type!(
    r#"message Quaternion { double x = 1; double y = 2; double z = 3; double w = 4; }
"#
);

const TIME_OF_DAY: &str = google_type!(
    r#"message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3; int32 nanos = 4; }
"#
);
