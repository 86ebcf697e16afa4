//! Exact decimals for `multipleOf`, as Confluent's `NumberSchemaDiff` compares it with `BigDecimal`: `0.5`
//! equals `0.50`, and `10` is a multiple of `0.5`.

use crate::json_value::Number;

/// `mantissa × 10^-scale`, both sides brought to one scale before comparing.
#[derive(Debug, Clone, Copy)]
pub struct Decimal {
    mantissa: i128,
    scale: u32,
}

/// Digits an `i128` always holds; longer literals are not compared exactly.
const MAX_DIGITS: usize = 36;

impl Decimal {
    /// The exact value of a JSON number literal, or `None` when it needs more than [`MAX_DIGITS`] digits.
    pub fn of(number: &Number) -> Option<Decimal> {
        let text = number.literal();
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (significand, exponent) = match text.split_once(['e', 'E']) {
            Some((significand, exponent)) => (significand, exponent.parse::<i64>().ok()?),
            None => (text, 0),
        };
        let (whole, fraction) = significand.split_once('.').unwrap_or((significand, ""));
        let digits = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        let scale = i64::try_from(fraction.len()).ok()? - exponent;
        let zeros = usize::try_from((-scale).max(0)).ok()?;
        if digits.len() + zeros > MAX_DIGITS || scale > i64::from(u8::MAX) {
            return None;
        }
        let mut mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
        mantissa = mantissa.checked_mul(10i128.checked_pow(u32::try_from(zeros).ok()?)?)?;
        let scale = u32::try_from(scale.max(0)).ok()?;
        Some(Decimal { mantissa: if negative { -mantissa } else { mantissa }, scale })
    }

    /// Both values as integers at their common scale, when they fit.
    fn aligned(self, other: Decimal) -> Option<(i128, i128)> {
        let scale = self.scale.max(other.scale);
        let lift = |d: Decimal| d.mantissa.checked_mul(10i128.checked_pow(scale - d.scale)?);
        Some((lift(self)?, lift(other)?))
    }

    /// Whether both are the same number (scale-insensitive); `None` when they cannot be aligned.
    pub fn equals(self, other: Decimal) -> Option<bool> {
        self.aligned(other).map(|(a, b)| a == b)
    }

    /// Whether `self` is a whole multiple of a non-zero `divisor` (`self.remainder(divisor) == 0`).
    pub fn is_multiple_of(self, divisor: Decimal) -> Option<bool> {
        self.aligned(divisor).map(|(a, b)| b != 0 && a % b == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Decimal {
        let value = crate::json_value::parse(text).unwrap_or_else(|e| panic!("{e}"));
        value.as_number().and_then(Decimal::of).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn literals_compare_by_value_and_divide_exactly() {
        assert_eq!(decimal("0.5").equals(decimal("0.50")), Some(true));
        assert_eq!(decimal("1e2").equals(decimal("100")), Some(true));
        assert_eq!(decimal("10").is_multiple_of(decimal("0.5")), Some(true));
        assert_eq!(decimal("0.3").is_multiple_of(decimal("0.1")), Some(true));
        assert_eq!(decimal("0.35").is_multiple_of(decimal("0.1")), Some(false));
        assert_eq!(decimal("5").is_multiple_of(decimal("0")), Some(false));
        assert_eq!(decimal("-6").is_multiple_of(decimal("3")), Some(true));
    }
}
