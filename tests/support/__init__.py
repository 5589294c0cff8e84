"""Helpers shared by the tests and the benchmarks: real and fake servers, scripted policies,
episodes, fresh processes. Nothing here is a test."""
