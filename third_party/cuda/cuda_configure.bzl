"""Repository rule exposing the machine's CUDA Toolkit to Bazel.

The toolkit is found at $CUDA_PATH (default /usr/local/cuda); this is the one
place that knows it. Pass `--repo_env=CUDA_PATH=/opt/cuda-13.0` (or export
CUDA_PATH before running Bazel) to use another toolkit.

Targets of the generated repository:
  @local_cuda//:nvcc      a wrapper script running the toolkit's nvcc
  @local_cuda//:headers   the toolkit's include directory (cuda_runtime_api.h, CCCL, ...)
  @local_cuda//:cudart    headers + the static CUDA runtime (no libcudart.so needed at run time)
"""

_DEFAULT_CUDA_PATH = "/usr/local/cuda"

_BUILD = """
package(default_visibility = ["//visibility:public"])

exports_files(["nvcc"])

cc_library(
    name = "headers",
    hdrs = glob(["include/**"]),
    includes = ["include"],
)

cc_library(
    name = "cudart",
    srcs = ["lib64/libcudart_static.a"],
    linkopts = [
        "-ldl",
        "-lrt",
        "-pthread",
    ],
    deps = [":headers"],
)
"""

def _cuda_configure_impl(repository_ctx):
    cuda_path = repository_ctx.os.environ.get("CUDA_PATH", _DEFAULT_CUDA_PATH)
    nvcc = cuda_path + "/bin/nvcc"
    if not repository_ctx.path(nvcc).exists:
        fail("CUDA Toolkit not found: %s does not exist (set CUDA_PATH)" % nvcc)
    repository_ctx.symlink(cuda_path + "/include", "include")
    repository_ctx.symlink(cuda_path + "/lib64/libcudart_static.a", "lib64/libcudart_static.a")

    # A wrapper rather than a symlink: nvcc finds nvcc.profile, ptxas and the
    # CCCL headers relative to its own real location.
    repository_ctx.file(
        "nvcc",
        "#!/bin/sh\nexec \"%s\" \"$@\"\n" % nvcc,
        executable = True,
    )
    repository_ctx.file("BUILD", _BUILD)

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH"],
    local = True,
)
