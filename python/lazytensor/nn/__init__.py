"""lazytensor.nn: Module, Parameter, the C library's layers and losses."""
from . import functional
from .modules import (Module, Parameter, Linear, Conv2d, LayerNorm, BatchNorm2d, Embedding,
                      SelfAttention, MaxPool2d, AvgPool2d, Dropout, Flatten, ReLU, GELU, SiLU, Tanh,
                      Sequential, ModuleList, CrossEntropyLoss, NLLLoss, MSELoss)

__all__ = ["functional", "Module", "Parameter", "Linear", "Conv2d", "LayerNorm", "BatchNorm2d",
           "Embedding", "SelfAttention", "MaxPool2d", "AvgPool2d", "Dropout", "Flatten", "ReLU",
           "GELU", "SiLU", "Tanh", "Sequential", "ModuleList", "CrossEntropyLoss", "NLLLoss",
           "MSELoss"]
