# A Python app with a pyproject.toml on NVIDIA's PyTorch container of each
# release, written by 'jetbake init --app pytorch'. jetbake passes BASE (the
# release's container), JETPACK, L4T, CUDA and CUDA_ARCH_LIST ("8.7;11.0").
ARG BASE
FROM ${BASE} AS app
ARG CUDA_ARCH_LIST
# Packages come from PyPI, or from the index given as a build arg: a mirror,
# or a local one for offline builds (--build-arg PIP_INDEX_URL=http://127.0.0.1:8080/simple).
# No "# syntax=" line: BuildKit's own Dockerfile frontend builds it, with no
# frontend image to pull, offline too.
ARG PIP_INDEX_URL
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# A venv that sees the container's packages: torch stays NVIDIA's build for
# this JetPack (CUDA for the Jetson's GPU), never a PyPI wheel. Without a pip
# of its own (not every python has ensurepip): the container's pip, which
# the venv sees, installs into it as "python -m pip".
RUN python3 -m venv --without-pip --system-site-packages /opt/venv
ENV PATH=/opt/venv/bin:$PATH
COPY . /src
# Constraints keep the vendor stack: the base's torch version exactly (read
# from its metadata: importing torch would load its CUDA libraries), and what
# NGC pins in /etc/pip/constraint.txt when the container has it. A dependency
# that wants another torch fails here instead of shadowing it. They are given
# with -c, not PIP_CONSTRAINT, so that they bind the app's install but not
# the isolated environment pip builds a source package in. NGC's torch is a
# pre-release (2.8.0a0+...): it meets torch>=2.0 but not torch>=2.8.
# pip check judges every package the venv sees, NGC's own included: only what
# the install broke fails the build.
# bitsandbytes is left out (do not install the extra that pulls it): its PyPI
# aarch64 wheels are SBSA builds that its docs call "not compatible with the
# L4T runtime on Jetson"; build it on the device with -DCOMPUTE_CAPABILITY=87,
# or take jetson-ai-lab's jp6/cu126 wheel, in a step of its own.
RUN set -eu; \
    python -m pip check > /tmp/pip-check.before 2>&1 || true; \
    echo "torch==$(python3 -c 'import importlib.metadata as m; print(m.version("torch"))')" > /opt/venv/constraints.txt; \
    if [ -f /etc/pip/constraint.txt ]; then cat /etc/pip/constraint.txt >> /opt/venv/constraints.txt; fi; \
    TORCH_CUDA_ARCH_LIST="$CUDA_ARCH_LIST" python -m pip install -c /opt/venv/constraints.txt /src; \
    python -m pip check > /tmp/pip-check.after 2>&1 || true; \
    if grep -v '^No broken requirements found' /tmp/pip-check.after | grep -vxF -f /tmp/pip-check.before; then \
      echo "pip check: the install broke the requirements above" >&2; exit 1; fi; \
    rm -f /tmp/pip-check.before /tmp/pip-check.after
