
mod fast_softmax;
mod positional_sandwich;
