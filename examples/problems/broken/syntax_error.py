# A broken problem: not valid Python. kbv must exit 3 (the problem cannot be evaluated).
import torch
def get_inputs(:
    return []
