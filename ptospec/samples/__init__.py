"""The PTO assembler's sample kernels with NumPy goldens, run through the program layer with the sample
harness's own arguments (``benchmarks/ptoas_samples.py``; docs/programs.md)."""
