#pragma once
// An output stream buffer that escapes what a terminal would act on, so text from objects that
// others wrote (a tenant's CEL expression, names, messages, annotations) cannot move the cursor,
// recolour, retitle the window or hide lines of the person who runs `sriov-dra`:
//   C0 control characters other than newline and tab (CR, ESC, BEL, NUL, ...) and DEL become
//   \xNN; C1 controls (U+0080-U+009F, UTF-8 C2 80-C2 9F, which some terminals take as CSI/OSC)
//   become \xc2\xNN, and so does a raw 8-bit C1 byte (0x80-0x9F that continues no UTF-8
//   character: what a terminal in a non-UTF-8 locale acts on) as \xNN. All other bytes pass,
//   UTF-8 text and the trees' box drawing included.
// Every subcommand writes through it (CommandLine::run); JSON and YAML output is unchanged
// unless it held raw control characters. Not thread-safe (as any std::streambuf).
#include <ostream>
#include <streambuf>

namespace sriovdra::cli {

class TerminalSafeBuf final : public std::streambuf {
 public:
  // Writes to `to`'s buffer, which must outlive this; flushes what it holds when destroyed.
  explicit TerminalSafeBuf(std::ostream& to) : to_(*to.rdbuf()) {}
  TerminalSafeBuf(const TerminalSafeBuf&) = delete;
  TerminalSafeBuf& operator=(const TerminalSafeBuf&) = delete;
  ~TerminalSafeBuf() override { sync(); }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void put(unsigned char c);
  void escaped(unsigned char c);

  std::streambuf& to_;
  bool after_c2_ = false;  // a 0xC2 byte is held until the next one says whether it starts a C1
  int continuations_ = 0;  // continuation bytes the UTF-8 character being written still has
};

}  // namespace sriovdra::cli
