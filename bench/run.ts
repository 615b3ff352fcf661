// The benchmark harness; its measurements arrive with the benchmarks issue.
process.stdout.write("No benchmarks yet.\n");
