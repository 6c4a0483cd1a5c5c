(* A driver written in OCaml under domains (OCaml 5): submits from three
   domains at once, each of whose driver calls takes its own domain's
   runtime lock back from the submit that released it. *)
open Check

let submit _ parts =
  Array.iter
    (function
      | Rig_edge.Driver.Fill { dst; pattern; _ } -> Bigarray.Array1.fill dst (pattern land 0xff)
      | Rig_edge.Driver.Copy { src; dst } -> Bigarray.Array1.blit src dst)
    parts

let driver =
  Rig_edge.Driver.make ~name:"mldom" ~open_:(fun _ -> Ok ())
    ~facts:(fun () -> { Rig_edge.Driver.arch = "mldom"; alignment = 16; budget = 1 lsl 24; cache_bytes = None })
    ~allocate:(fun () n -> Some (Bigarray.Array1.create Bigarray.int8_unsigned Bigarray.c_layout (max n 1)))
    ~submit ~stop:ignore

let () =
  let d = Result.get_ok (Rig.open_ (Rig_edge.Driver.opener driver "0")) in
  let one k () =
    let b = Rig.Buffer.create d 16 and s = Bytes.create 16 in
    let fill v = Rig.Submission.(make d [| fill 0 v |]) in
    let ok = ref true in
    for i = 1 to 100 do
      let v = (k * 64 + i) land 0xff in
      ignore (Rig.submit (Rig.Submission.take (fill v)) ~buffers:[| b |]);
      Rig.Buffer.blit_to_bytes b 0 s 0 16;
      if Bytes.to_string s <> String.make 16 (Char.chr v) then ok := false;
      if i mod 10 = 0 then Gc.minor ()
    done;
    !ok
  in
  let ds = List.init 3 (fun k -> Domain.spawn (one k)) in
  check "three domains' submits" (List.for_all Domain.join ds);
  Rig.close d;
  finish "test_driver_domains"
