// What a mutex protects, said in the code so that clang checks it at
// compile time (-Wthread-safety, on in every clang build, an error in the
// test build): a member read or written without its mutex held, a helper
// that expects the mutex held called without it, or a lock left held on
// some path, does not compile. GCC has no such analysis: there the macros
// are empty.
//
// The mutex to annotate is trainyard::Mutex (common/mutex.h): libstdc++'s
// std::mutex carries no annotations, so the analysis cannot see it taken.
//
//   Mutex mu_;
//   int count_ TRAINYARD_GUARDED_BY(mu_) = 0;
//   void Bump() TRAINYARD_REQUIRES(mu_);  // a private helper: mu_ held
//
// The analysis looks at one function at a time. A lambda is a function of
// its own: one run under a lock its caller holds (a condition's predicate,
// a visitor handed a store's objects) says so itself, `[&]()
// TRAINYARD_REQUIRES(mu_) { ... }`. Constructors and destructors are not
// checked.
#pragma once

#if defined(__clang__)
#define TRAINYARD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TRAINYARD_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are locks ("mutex" is the name messages use).
#define TRAINYARD_CAPABILITY(name) TRAINYARD_THREAD_ANNOTATION(capability(name))
// On a class: an object that holds a lock for its lifetime (MutexLock).
#define TRAINYARD_SCOPED_CAPABILITY TRAINYARD_THREAD_ANNOTATION(scoped_lockable)

// On a member (or a global): read or written only with `mu` held.
#define TRAINYARD_GUARDED_BY(mu) TRAINYARD_THREAD_ANNOTATION(guarded_by(mu))
// On a pointer member: what it points to is used only with `mu` held (the
// pointer itself is not protected).
#define TRAINYARD_PT_GUARDED_BY(mu) TRAINYARD_THREAD_ANNOTATION(pt_guarded_by(mu))

// On a mutex member: the order two locks are taken in, where a thread
// holds both.
#define TRAINYARD_ACQUIRED_BEFORE(...) TRAINYARD_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define TRAINYARD_ACQUIRED_AFTER(...) TRAINYARD_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// On a function: its caller holds these locks, and still holds them after.
#define TRAINYARD_REQUIRES(...) TRAINYARD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define TRAINYARD_REQUIRES_SHARED(...) \
  TRAINYARD_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// On a function: its caller must not hold these (it takes them itself).
#define TRAINYARD_EXCLUDES(...) TRAINYARD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// On a function: it returns holding these locks, which it did not hold
// before (none named: the object it is called on).
#define TRAINYARD_ACQUIRE(...) TRAINYARD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define TRAINYARD_ACQUIRE_SHARED(...) \
  TRAINYARD_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
// On a function: the locks it is called holding are no longer held when it
// returns.
#define TRAINYARD_RELEASE(...) TRAINYARD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRAINYARD_RELEASE_SHARED(...) \
  TRAINYARD_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// On a function returning bool: the locks are held when it returns
// `result`, and not otherwise.
#define TRAINYARD_TRY_ACQUIRE(result, ...) \
  TRAINYARD_THREAD_ANNOTATION(try_acquire_capability(result, __VA_ARGS__))
// On a function: once it returns, the analysis takes the lock as held
// (nothing is checked at run time unless the function checks it).
#define TRAINYARD_ASSERT_CAPABILITY(mu) TRAINYARD_THREAD_ANNOTATION(assert_capability(mu))
// On a function returning a mutex: which one.
#define TRAINYARD_RETURN_CAPABILITY(mu) TRAINYARD_THREAD_ANNOTATION(lock_returned(mu))

// On a function whose locking the analysis cannot follow: its body is not
// checked (what it promises its callers, REQUIRES and the like, still is).
// Say beside it why, and keep such functions few and small.
#define TRAINYARD_NO_THREAD_SAFETY_ANALYSIS TRAINYARD_THREAD_ANNOTATION(no_thread_safety_analysis)
