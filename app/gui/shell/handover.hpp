// Queued calls between threads, stated so that ThreadSanitizer sees them.
//
// QMetaObject::invokeMethod(obj, f, Qt::QueuedConnection) hands the functor `f` to the thread of `obj`
// through Qt's event queue, which locks with Qt's futex-based QMutex inside libQt6Core. Qt is not
// built with ThreadSanitizer, so TSan does not see that hand-over: everything the posting thread wrote
// before it (the captures, the objects they point to) looks like a data race when the receiving thread
// reads it. handedOver(f) wraps the functor: the copy Qt keeps releases the posting thread's writes
// (__tsan_release on its own address, when it is constructed), and calling or destroying it on the
// receiving thread acquires them, the happens-before edge the event queue really gives. Edges that
// are not a functor (a thread that has finished, a blocking call that has returned) take
// gpulab::tsanRelease/tsanAcquire (gpulab/core/thread_annotations.hpp) on an address both sides know.
// Without -fsanitize=thread handedOver(f) is the plain functor.
//
//   invokeQueued(worker, [job] { job->run(); });  // QMetaObject::invokeMethod(worker, handedOver(...), queued)
#pragma once

#include <QMetaObject>
#include <QObject>
#include <type_traits>
#include <utility>

#include "gpulab/core/thread_annotations.hpp"

namespace gpulab::gui {

#ifdef GPULAB_TSAN
template <class F>
class HandedOver {
 public:
  explicit HandedOver(F f) : f_(std::move(f)) { gpulab::tsanRelease(this); }
  HandedOver(HandedOver&& other) : f_(std::move(other.f_)) { gpulab::tsanRelease(this); }
  HandedOver(const HandedOver& other) : f_(other.f_) { gpulab::tsanRelease(this); }
  HandedOver& operator=(const HandedOver&) = delete;
  HandedOver& operator=(HandedOver&&) = delete;
  // Qt drops its last reference to the functor on either thread (the poster's invokeMethod may
  // return after the call): whichever destroys it first acquires what the other side wrote.
  ~HandedOver() { gpulab::tsanAcquire(this); }

  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    gpulab::tsanAcquire(this);
    const Published published{this};  // and the call's own writes (a moved capture), for the destructor
    return f_(std::forward<Args>(args)...);
  }

 private:
  struct Published {
    const void* at;
    ~Published() { gpulab::tsanRelease(at); }
  };
  F f_;
};

template <class F>
HandedOver<std::decay_t<F>> handedOver(F&& f) {
  return HandedOver<std::decay_t<F>>(std::forward<F>(f));
}
#else
template <class F>
std::decay_t<F> handedOver(F&& f) {
  return std::forward<F>(f);
}
#endif

/// QMetaObject::invokeMethod(context, handedOver(f), type): `f` runs on the thread of `context`.
/// With Qt::BlockingQueuedConnection the caller also sees what `f` wrote once this returns.
template <class F>
bool invokeQueued(QObject* context, F&& f, Qt::ConnectionType type = Qt::QueuedConnection) {
  if (type != Qt::BlockingQueuedConnection)
    return QMetaObject::invokeMethod(context, handedOver(std::forward<F>(f)), type);
  char returned = 0;  // the address of the edge back (Qt's semaphore is invisible to TSan)
  const bool ok = QMetaObject::invokeMethod(context, handedOver([&f, &returned] {
                                              f();
                                              gpulab::tsanRelease(&returned);
                                            }),
                                            type);
  gpulab::tsanAcquire(&returned);
  return ok;
}

}  // namespace gpulab::gui
