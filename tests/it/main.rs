mod fast_softmax;
mod kernel;
mod kernel_arith;
mod kernel_compare;
mod kernel_elementary;
mod kernel_softmax;
mod positional_alibi;
mod positional_sandwich;
