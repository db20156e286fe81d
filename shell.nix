# A development shell with everything the build, tests and benchmarks use.
{ pkgs ? import <nixpkgs> { } }:
pkgs.mkShell {
  packages = with pkgs; [
    cargo
    rustc
    rustfmt
    clippy
    cargo-nextest
    python3
    python3Packages.hypothesis
    bubblewrap
    just
  ];
  RUST_BACKTRACE = "1";
}
