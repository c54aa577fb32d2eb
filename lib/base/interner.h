#pragma once
// One shared, immutable copy of each distinct value (the flyweight pattern). An operator caches an
// object per node of the cluster, and the nodes of a pool report the same hardware and are given
// the same configuration: interned, a thousand alike nodes hold one copy of it.
// T needs operator<. A value is forgotten when its last holder lets go of it.
// Thread-safety: intern() and size() may be called from any thread; the values are immutable.
#include <map>
#include <memory>
#include <mutex>

namespace sriovdra {

template <typename T>
class Interner {
 public:
  // The shared copy of a value equal to `value`, made from it when there is none.
  std::shared_ptr<const T> intern(T value) {
    std::lock_guard lock(mu_);
    auto it = values_.find(&value);
    if (it != values_.end()) {
      if (auto shared = it->second.lock()) return shared;
      values_.erase(it);  // its last holder is letting go of it right now
    }
    const T* raw = new T(std::move(value));
    std::shared_ptr<const T> shared(raw, [this](const T* p) {
      forget(p);
      delete p;
    });
    values_.emplace(raw, shared);
    return shared;
  }

  // How many distinct values are held.
  size_t size() const {
    std::lock_guard lock(mu_);
    return values_.size();
  }

  // The process's interner of T. Never destroyed, so values may outlive static destructors.
  static Interner& global() {
    static auto* interner = new Interner();
    return *interner;
  }

 private:
  struct ByValue {
    bool operator()(const T* a, const T* b) const { return *a < *b; }
  };

  void forget(const T* p) {
    std::lock_guard lock(mu_);
    auto it = values_.find(p);
    // An equal value interned after this one expired has its own entry: leave that alone.
    if (it != values_.end() && it->first == p) values_.erase(it);
  }

  mutable std::mutex mu_;
  std::map<const T*, std::weak_ptr<const T>, ByValue> values_;  // guarded by mu_
};

}  // namespace sriovdra
