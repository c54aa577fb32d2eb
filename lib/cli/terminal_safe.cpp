#include "cli/terminal_safe.h"

namespace sriovdra::cli {

void TerminalSafeBuf::escaped(unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char text[] = {'\\', 'x', kHex[c >> 4], kHex[c & 0xf]};
  to_.sputn(text, sizeof text);
}

void TerminalSafeBuf::put(unsigned char c) {
  const bool continuation = c >= 0x80 && c <= 0xbf;
  if (after_c2_) {
    after_c2_ = false;
    if (c >= 0x80 && c <= 0x9f) {
      escaped(0xc2);
      escaped(c);
      return;
    }
    to_.sputc(static_cast<char>(0xc2));
    if (continuation) {
      to_.sputc(static_cast<char>(c));
      return;
    }
  }
  if (continuations_ > 0 && continuation) {
    --continuations_;
    to_.sputc(static_cast<char>(c));
    return;
  }
  continuations_ = 0;
  if (c == 0xc2) {
    after_c2_ = true;
  } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
    // 0x80-0x9F here is no part of a UTF-8 character: a raw 8-bit C1 control.
    escaped(c);
  } else {
    continuations_ = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    to_.sputc(static_cast<char>(c));
  }
}

TerminalSafeBuf::int_type TerminalSafeBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  put(static_cast<unsigned char>(traits_type::to_char_type(c)));
  return c;
}

std::streamsize TerminalSafeBuf::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i) put(static_cast<unsigned char>(s[i]));
  return n;
}

int TerminalSafeBuf::sync() {
  if (after_c2_) {
    after_c2_ = false;
    to_.sputc(static_cast<char>(0xc2));
  }
  return to_.pubsync();
}

}  // namespace sriovdra::cli
