"""cc_fuzz_target: a libFuzzer target and a test replaying its seed corpus.

    load("//tools:fuzz.bzl", "cc_fuzz_target")

    cc_fuzz_target(
        name = "page_pool_fuzzer",           # the fuzz binary
        srcs = ["page_pool_fuzzer.cc"],      # defines LLVMFuzzerTestOneInput
        corpus = glob(["fuzz_corpus/page_pool/*"]),
        deps = [":page_pool", "//testing:fuzz_input"],
    )

Makes:
  NAME              under --config=fuzz (clang, see .bazelrc and tools/FUZZING.md)
                    a libFuzzer binary; otherwise the same code linked with
                    //tools:fuzz_main, which runs the files it is given once.
  NAME_corpus_test  runs every seed corpus file once through the target, in
                    every config (default, asan, ubsan): seeds stay green.
  NAME_corpus       a filegroup of the seeds, for tools/fuzz.sh.
"""

def cc_fuzz_target(name, srcs, corpus, deps = [], **kwargs):
    native.cc_library(
        name = name + "_lib",
        testonly = True,
        srcs = srcs,
        deps = deps,
        alwayslink = True,
        visibility = ["//visibility:private"],
    )
    native.filegroup(
        name = name + "_corpus",
        testonly = True,
        srcs = corpus,
    )
    native.cc_binary(
        name = name,
        testonly = True,
        deps = [":" + name + "_lib"] + select({
            "//tools:fuzzing": [],
            "//conditions:default": ["//tools:fuzz_main"],
        }),
        linkopts = select({
            "//tools:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        tags = ["fuzzer"],
        **kwargs
    )
    native.cc_test(
        name = name + "_corpus_test",
        deps = [
            ":" + name + "_lib",
            "//tools:fuzz_main",
        ],
        args = ["$(locations :%s_corpus)" % name],
        data = [":" + name + "_corpus"],
    )
