import fc from "fast-check";

// A failing property reports its first counterexample (with its seed) instead of shrinking: shrinking the huge
// inputs these properties generate can run for longer than CI waits, synchronously, with nothing printed.
fc.configureGlobal({ endOnFailure: true, interruptAfterTimeLimit: 120_000, markInterruptAsFailure: true });
