
mod fast_softmax;
