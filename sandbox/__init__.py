"""A local emulator of the payments provider, written from the spec alone.

Build it with `sandbox.app.create_app(SandboxConfig(...))`, or run it with
`python -m sandbox` / `payrecon sandbox`. It imports nothing from the other
payrecon packages: it is an independent second reading of the spec.
"""
