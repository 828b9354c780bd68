//! The codec of every generated service and client: prost, with small first buffers.
//!
//! tonic's default codec starts each call's encode and decode buffers at 8 KiB. A bete request
//! or unary response is tens to hundreds of bytes, and an 8 KiB block is past glibc's
//! per-thread cache: two such blocks per call went to malloc's slow path, where a large request
//! also consolidates every freed small chunk first. The buffers still grow for larger messages.

use std::marker::PhantomData;

use prost::Message;
use tonic::codec::{BufferSettings, Codec};
use tonic_prost::{ProstDecoder, ProstEncoder};

/// First capacity of a call's encode and decode buffers: within glibc's per-thread cache
/// (chunks up to 1 KiB), big enough for a move and its acknowledgement.
const FIRST_BUFFER: usize = 512;
/// tonic's default: a stream hands its encoded messages on in chunks of up to this.
const YIELD_THRESHOLD: usize = 32 * 1024;

fn settings() -> BufferSettings {
    BufferSettings::new(FIRST_BUFFER, YIELD_THRESHOLD)
}

/// [`tonic_prost::ProstCodec`] with [`FIRST_BUFFER`]-byte first buffers; the wire format is
/// the same.
#[derive(Debug, Clone, Copy)]
pub struct ProstCodec<T, U>(PhantomData<fn() -> (T, U)>);

impl<T, U> Default for ProstCodec<T, U> {
    fn default() -> Self {
        ProstCodec(PhantomData)
    }
}

impl<T, U> Codec for ProstCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::new(settings())
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstDecoder::new(settings())
    }
}
