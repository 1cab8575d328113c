// Only in the ThreadSanitizer build (scripts/tsan). librdkafka starts its
// threads with C11 thrd_create, which GCC 12's TSan runtime does not
// intercept: those threads run unregistered and crash in its allocator. This
// thrd_create (interposed over glibc's for the whole process) starts them
// through pthread_create, which TSan does see; thrd_join and the rest of
// glibc's C11 threads work on the resulting pthread_t unchanged.
#include <threads.h>

#include <pthread.h>

#include <cerrno>
#include <cstdint>

namespace {
struct Start {
    thrd_start_t func;
    void* arg;
};
void* run(void* p) {
    const Start s = *static_cast<Start*>(p);
    delete static_cast<Start*>(p);
    return reinterpret_cast<void*>(static_cast<std::intptr_t>(s.func(s.arg)));
}
} // namespace

extern "C" int thrd_create(thrd_t* thr, thrd_start_t func, void* arg) {
    auto* s = new Start{func, arg};
    const int rc = pthread_create(thr, nullptr, run, s);
    if (rc != 0)
        delete s;
    return rc == 0 ? thrd_success : rc == ENOMEM ? thrd_nomem : thrd_error;
}

// Joined and detached through pthread too, so TSan sees them end (else a new
// thread reusing the id is "dup thread").
extern "C" int thrd_join(thrd_t thr, int* res) {
    void* out = nullptr;
    if (pthread_join(thr, &out) != 0)
        return thrd_error;
    if (res)
        *res = static_cast<int>(reinterpret_cast<std::intptr_t>(out));
    return thrd_success;
}

extern "C" int thrd_detach(thrd_t thr) {
    return pthread_detach(thr) == 0 ? thrd_success : thrd_error;
}
