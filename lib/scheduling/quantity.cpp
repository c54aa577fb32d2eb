#include "scheduling/quantity.h"

#include <cctype>
#include <charconv>

namespace sriovdra::scheduling {
namespace {

constexpr __int128 kNano = 1'000'000'000;
constexpr __int128 kMax = static_cast<__int128>(1) << 100;

Status badQuantity(std::string_view text, std::string_view why) {
  return Status(Code::kInvalidArgument,
                "quantity \"" + std::string(text) + "\": " + std::string(why) +
                    " (expected a number with an optional suffix such as 80Gi, 500m, 1e3)");
}

bool digitsOnly(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

}  // namespace

Result<Quantity> Quantity::parse(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) != 0 || s[i] == '.')) ++i;
  std::string_view number = s.substr(0, i), suffix = s.substr(i);
  auto dot = number.find('.');
  std::string_view whole = number.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? "" : number.substr(dot + 1);
  if ((whole.empty() && frac.empty()) || (!whole.empty() && !digitsOnly(whole)) ||
      (!frac.empty() && !digitsOnly(frac)) ||
      (dot != std::string_view::npos && frac.empty() && whole.empty())) {
    return badQuantity(text, "no number");
  }
  if (whole.size() + frac.size() > 30) return badQuantity(text, "too many digits");
  // value = digits / 10^frac.size() * multiplier, multiplier = base^exp
  __int128 digits = 0;
  for (char c : whole) digits = digits * 10 + (c - '0');
  for (char c : frac) digits = digits * 10 + (c - '0');
  int dec_exp = -static_cast<int>(frac.size());
  int bin_exp = 0;
  static const std::pair<std::string_view, int> kBinary[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30},
                                                             {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  static const std::pair<std::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  bool known = false;
  for (const auto& [name, e] : kBinary) {
    if (suffix == name) bin_exp = e, known = true;
  }
  for (const auto& [name, e] : kDecimal) {
    if (suffix == name) dec_exp += e, known = true;
  }
  if (!known && suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    int e = 0;
    std::string_view exp = suffix.substr(1);
    auto [p, ec] =
        std::from_chars(exp.data() + (exp[0] == '+' ? 1 : 0), exp.data() + exp.size(), e);
    if (ec != std::errc() || p != exp.data() + exp.size()) return badQuantity(text, "bad exponent");
    dec_exp += e;
    known = true;
  }
  if (!known) return badQuantity(text, "unknown suffix \"" + std::string(suffix) + "\"");
  dec_exp += 9;  // nano units
  __int128 v = digits;
  for (int k = 0; k < bin_exp; ++k) {
    v *= 2;
    if (v > kMax) return badQuantity(text, "too large");
  }
  for (; dec_exp > 0; --dec_exp) {
    v *= 10;
    if (v > kMax) return badQuantity(text, "too large");
  }
  for (; dec_exp < 0; ++dec_exp) {
    v = (v + 9) / 10;  // Kubernetes rounds up what is below its precision
  }
  Quantity q;
  q.nanos_ = negative ? -v : v;
  q.text_ = std::string(text);
  return q;
}

Quantity Quantity::fromNanos(__int128 nanos) {
  Quantity q;
  q.nanos_ = nanos;
  __int128 magnitude = nanos < 0 ? -nanos : nanos;
  auto digits = [](__int128 v) {
    std::string out;
    for (; v > 0 || out.empty(); v /= 10) {
      out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    }
    return out;
  };
  // The shortest of: the largest decimal unit and the largest binary unit that divide it.
  std::string text;
  auto consider = [&](__int128 scale, const char* unit) {
    if (magnitude % scale != 0) return false;
    std::string candidate = digits(magnitude / scale) + unit;
    if (text.empty() || candidate.size() < text.size()) text = candidate;
    return true;
  };
  static const std::pair<int, const char*> kDecimal[] = {{27, "E"}, {24, "P"}, {21, "T"},
                                                         {18, "G"}, {15, "M"}, {12, "k"},
                                                         {9, ""},   {6, "m"},  {0, "n"}};
  for (const auto& [exp, unit] : kDecimal) {
    __int128 scale = 1;
    for (int i = 0; i < exp; ++i) scale *= 10;
    if (magnitude != 0 && consider(scale, unit)) break;
  }
  static const std::pair<int, const char*> kBinary[] = {{60, "Ei"}, {50, "Pi"}, {40, "Ti"},
                                                        {30, "Gi"}, {20, "Mi"}, {10, "Ki"}};
  for (const auto& [bits, unit] : kBinary) {
    if (magnitude != 0 && consider(kNano << bits, unit)) break;
  }
  if (magnitude == 0) text = "0";
  q.text_ = (nanos < 0 ? "-" : "") + text;
  return q;
}

bool Quantity::isInteger() const { return nanos_ % kNano == 0; }

int64_t Quantity::roundedUp() const {
  __int128 whole = nanos_ / kNano;
  if (nanos_ % kNano > 0) ++whole;
  if (whole > INT64_MAX) return INT64_MAX;
  if (whole < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(whole);
}

Result<int64_t> Quantity::asInteger() const {
  __int128 whole = nanos_ / kNano;
  if (whole > INT64_MAX || whole < INT64_MIN) {
    return Status(Code::kInvalidArgument, "quantity " + text_ + " does not fit an int");
  }
  return static_cast<int64_t>(whole);
}

Result<Semver> Semver::parse(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status(Code::kInvalidArgument,
                  "version \"" + std::string(text) +
                      "\" is not a semantic version (MAJOR.MINOR.PATCH): " + std::string(why));
  };
  Semver v;
  v.text_ = std::string(text);
  std::string_view s = text;
  auto plus = s.find('+');
  if (plus != std::string_view::npos) {
    if (plus + 1 == s.size()) return bad("empty build metadata");
    s = s.substr(0, plus);
  }
  std::string_view pre;
  auto dash = s.find('-');
  if (dash != std::string_view::npos) {
    pre = s.substr(dash + 1);
    s = s.substr(0, dash);
    if (pre.empty()) return bad("empty pre-release");
  }
  int64_t* parts[] = {&v.major_, &v.minor_, &v.patch_};
  for (int k = 0; k < 3; ++k) {
    auto end = k < 2 ? s.find('.') : s.size();
    if (end == std::string_view::npos) return bad("fewer than three numbers");
    std::string_view n = s.substr(0, end);
    if (!digitsOnly(n)) return bad("\"" + std::string(n) + "\" is not a number");
    if (n.size() > 1 && n[0] == '0') return bad("leading zero in \"" + std::string(n) + "\"");
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), *parts[k]);
    if (ec != std::errc()) return bad("number too large");
    s = k < 2 ? s.substr(end + 1) : std::string_view();
  }
  while (!pre.empty()) {
    auto dot = pre.find('.');
    std::string_view id = pre.substr(0, dot);
    if (id.empty()) return bad("empty pre-release identifier");
    if (digitsOnly(id) && id.size() > 1 && id[0] == '0') return bad("leading zero in pre-release");
    v.prerelease_.emplace_back(id);
    pre = dot == std::string_view::npos ? "" : pre.substr(dot + 1);
  }
  return v;
}

int Semver::compare(const Semver& o) const {
  auto three = [](int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); };
  if (int c = three(major_, o.major_)) return c;
  if (int c = three(minor_, o.minor_)) return c;
  if (int c = three(patch_, o.patch_)) return c;
  // A pre-release sorts before its release.
  if (prerelease_.empty() != o.prerelease_.empty()) return prerelease_.empty() ? 1 : -1;
  for (size_t i = 0; i < std::min(prerelease_.size(), o.prerelease_.size()); ++i) {
    const auto &a = prerelease_[i], &b = o.prerelease_[i];
    bool an = digitsOnly(a), bn = digitsOnly(b);
    if (an && bn) {
      if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
      if (a != b) return a < b ? -1 : 1;
    } else if (an != bn) {
      return an ? -1 : 1;  // numeric identifiers sort first
    } else if (a != b) {
      return a < b ? -1 : 1;
    }
  }
  return three(static_cast<int64_t>(prerelease_.size()),
               static_cast<int64_t>(o.prerelease_.size()));
}

}  // namespace sriovdra::scheduling
