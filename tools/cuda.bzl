"""cuda_library: compile .cu files with nvcc into a cc_library.

    load("//tools:cuda.bzl", "cuda_library")

    cuda_library(
        name = "fill",
        srcs = ["fill.cu"],          # compiled by nvcc, one object per file
        hdrs = ["fill.h"],           # host-visible API (no CUDA types needed)
        cuda_hdrs = ["fill.cuh"],    # device headers used only by srcs
        deps = [...],                # cc_library deps; their headers are visible to nvcc
    )

The result is a cc_library of the same name that cc_library/cc_test/cc_binary
targets can depend on; it links the static CUDA runtime. Every header the .cu
files can see (hdrs, cuda_hdrs, transitive headers of deps, the toolkit's) is
an input of the compile action, so editing a .cuh rebuilds what includes it.

Target architectures come from `--define=cuda_archs=...` (see .bazelrc): a
comma-separated list where `sm_XX` embeds machine code and `compute_XX`
embeds PTX for the driver to compile on newer GPUs.

`--define=cuda_copts=...` adds nvcc flags to every .cu compile of the build,
comma-separated (a define's value cannot hold spaces), after the target's own
copts: e.g. `--define=cuda_copts=-Xptxas=-v` prints each kernel's registers
and spills, `--define=cuda_copts=-DSOME_PROBE` builds a probe's #ifdef code
without a branch commit. Like cuda_archs, a changed value rebuilds every .cu.
"""

_DEFAULT_CUDA_ARCHS = "sm_90a,compute_90"

def _gencode_flags(archs):
    flags = []
    for arch in archs.split(","):
        arch = arch.strip()
        if arch.startswith("sm_"):
            flags.append("-gencode=arch=compute_%s,code=%s" % (arch[3:], arch))
        elif arch.startswith("compute_"):
            flags.append("-gencode=arch=%s,code=%s" % (arch, arch))
        elif arch:
            fail("cuda_archs entries must look like sm_90a or compute_90, got '%s'" % arch)
    return flags

def _extra_copts(value):
    return [flag.strip() for flag in value.split(",") if flag.strip()]

def _cuda_objects_impl(ctx):
    compilation_contexts = [dep[CcInfo].compilation_context for dep in ctx.attr.deps if CcInfo in dep]
    header_sets = [cc.headers for cc in compilation_contexts]
    headers = depset(ctx.files.hdrs, transitive = header_sets)

    include_flags = ["-I.", "-I" + ctx.genfiles_dir.path]
    for cc in compilation_contexts:
        for path in cc.includes.to_list() + cc.quote_includes.to_list() + cc.system_includes.to_list():
            include_flags.append("-I" + path)
    define_flags = []
    for cc in compilation_contexts:
        define_flags += ["-D" + d for d in cc.defines.to_list()]

    archs = ctx.var.get("cuda_archs", _DEFAULT_CUDA_ARCHS)
    build_copts = _extra_copts(ctx.var.get("cuda_copts", ""))
    common_flags = [
        "-std=c++17",
        "-O3",
        "-lineinfo",
        "--expt-relaxed-constexpr",
        "-Xcompiler=-fPIC",
        "-Xcompiler=-Wall",
    ] + _gencode_flags(archs) + ctx.attr.copts + build_copts + include_flags + depset(define_flags).to_list()

    objects = []
    for src in ctx.files.srcs:
        obj = ctx.actions.declare_file("_cuda_objs/%s/%s.o" % (ctx.label.name, src.basename[:-len(".cu")]))
        args = ctx.actions.args()
        args.add_all(common_flags)
        args.add_all(["-c", src.path, "-o", obj.path])
        ctx.actions.run(
            executable = ctx.executable._nvcc,
            arguments = [args],
            inputs = depset([src], transitive = [headers]),
            outputs = [obj],
            mnemonic = "NvccCompile",
            progress_message = "Compiling CUDA %s" % src.short_path,
            use_default_shell_env = True,
        )
        objects.append(obj)
    return [DefaultInfo(files = depset(objects))]

_cuda_objects = rule(
    implementation = _cuda_objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = [".h", ".cuh"]),
        "deps": attr.label_list(providers = [CcInfo]),
        "copts": attr.string_list(),
        "_nvcc": attr.label(
            default = "@local_cuda//:nvcc",
            executable = True,
            cfg = "exec",
            allow_single_file = True,
        ),
    },
)

def cuda_library(name, srcs, hdrs = [], cuda_hdrs = [], deps = [], copts = [], visibility = None, testonly = False, **kwargs):
    """A cc_library whose .cu srcs are compiled by nvcc (see the file comment)."""
    all_deps = deps + ["@local_cuda//:cudart"]
    _cuda_objects(
        name = name + "_cuda_objects",
        srcs = srcs,
        hdrs = hdrs + cuda_hdrs,
        deps = all_deps,
        copts = copts,
        testonly = testonly,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        srcs = [":" + name + "_cuda_objects"],
        hdrs = hdrs,
        textual_hdrs = cuda_hdrs,
        deps = all_deps,
        visibility = visibility,
        testonly = testonly,
        **kwargs
    )
