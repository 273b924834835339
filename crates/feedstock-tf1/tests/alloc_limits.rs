//! Outputs sized by a user's value (tile multiples, a one_hot depth, a
//! fill shape, a broadcast, a decode_raw batch) that memory cannot hold:
//! a ResourceExhausted error naming the node and the shape, as
//! TensorFlow's "OOM when allocating tensor", never an abort (issue 33,
//! item 6). The same checks run again in a child process whose address
//! space is limited, where a smaller request is already too much.

use feedstock_tf1::op::{Binary, OneHot};
use feedstock_tf1::op::{Fill, Tile};
use std::process::Command;

use bytes::Bytes;
use feedstock::decode::raw::{decode_raw_batch, ByteOrder};
use feedstock::{DType, Kind, Tensor};
use feedstock_tf1::kernels::math::BinaryOp;
use feedstock_tf1::{Graph, Output, Session};

/// Runs `out` of `g` and returns its error.
fn run_err(g: &Graph, out: Output) -> feedstock::Error {
    let sess = Session::new(g);
    match sess.run(&[out], &[]) {
        Ok(v) => {
            panic!("ran to {:?}", v[0].dense().map(|t| t.dims().to_vec()))
        }
        Err(e) => e,
    }
}

fn assert_oom(e: &feedstock::Error, node: &str, shape: &str) {
    assert_eq!(e.kind(), Kind::ResourceExhausted, "{e}");
    assert!(e.is_out_of_memory(), "{e}");
    let want =
        format!("{node}: OOM when allocating tensor with shape[{shape}]");
    assert!(e.message().contains(&want), "{e}");
}

fn absurd_outputs_fail_cleanly() {
    let g = Graph::new();
    let one = g.constant(Tensor::vector(vec![1.0f32])).unwrap();
    let t = g
        .op1(
            Tile {
                multiples: vec![1 << 40],
            },
            &[one],
        )
        .unwrap();
    assert_oom(&run_err(&g, t), "Tile", "1099511627776");

    let g = Graph::new();
    let one = g
        .constant(Tensor::new([1, 1], vec![1.0f32]).unwrap())
        .unwrap();
    let t = g
        .op1(
            Tile {
                multiples: vec![1 << 20, 1 << 20],
            },
            &[one],
        )
        .unwrap();
    let e = run_err(&g, t);
    assert_oom(&e, "Tile", "1048576,1048576");
    assert!(
        e.message().contains("type float32 (4398046511104 bytes)"),
        "{e}"
    );

    let g = Graph::new();
    let s = g.constant(Tensor::vector(vec![Bytes::from("x")])).unwrap();
    let t = g
        .op1(
            Tile {
                multiples: vec![usize::MAX],
            },
            &[s],
        )
        .unwrap();
    assert_oom(&run_err(&g, t), "Tile", "18446744073709551615");

    let g = Graph::new();
    let idx = g.constant(Tensor::vector(vec![1i64])).unwrap();
    let on = g.constant(Tensor::scalar(1.0f32)).unwrap();
    let off = g.constant(Tensor::scalar(0.0f32)).unwrap();
    let t = g
        .op1(
            OneHot {
                depth: 1 << 40,
                axis: -1,
            },
            &[idx, on, off],
        )
        .unwrap();
    assert_oom(&run_err(&g, t), "one_hot", "1,1099511627776");

    let g = Graph::new();
    let dims = g.constant(Tensor::vector(vec![1i64 << 40])).unwrap();
    let v = g.constant(Tensor::scalar(1.0f64)).unwrap();
    let t = g.op1(Fill {}, &[dims, v]).unwrap();
    assert_oom(&run_err(&g, t), "Fill", "1099511627776");

    let g = Graph::new();
    let col = g
        .constant(Tensor::zeros(DType::F32, [1 << 20, 1]).unwrap())
        .unwrap();
    let row = g
        .constant(Tensor::zeros(DType::F32, [1, 1 << 20]).unwrap())
        .unwrap();
    let t = g.op1(Binary { op: BinaryOp::Add }, &[col, row]).unwrap();
    assert_oom(&run_err(&g, t), "add", "1048576,1048576");

    let e = Tensor::zeros(DType::I64, [1 << 40, 1 << 20]).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");

    // A batch of records is one tensor: 2^20 records of 1 MiB (the same
    // 1 MiB, shared) decode to 1 TiB.
    let rec = Bytes::from(vec![0u8; 1 << 20]);
    let batch = vec![rec; 1 << 20];
    let e = decode_raw_batch(&batch[..], DType::U8, ByteOrder::LittleEndian)
        .unwrap_err();
    assert_eq!(e.kind(), Kind::ResourceExhausted, "{e}");
    assert!(
        e.message()
            .contains("shape[1048576,1048576] and type uint8"),
        "{e}"
    );
}

#[test]
fn absurd_sizes_are_resource_exhausted() {
    absurd_outputs_fail_cleanly();
}

#[cfg(unix)]
#[test]
fn absurd_sizes_are_resource_exhausted_under_a_memory_limit() {
    // This test binary again, running the test above with its address
    // space limited to 1 GiB.
    let exe = std::env::current_exe().unwrap();
    let run = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(exe)
        .args([
            "absurd_sizes_are_resource_exhausted",
            "--exact",
            "--test-threads",
            "1",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{run:?}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}
