"""Server reflection and health work from Python."""

import grpc
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase


def test_reflection_lists_and_describes_the_services(server):
    with grpc.insecure_channel(server) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        services = set(db.get_services())
        assert {"bete.v1.TableService", "bete.v1.BotService"} <= services
        pool = DescriptorPool(db)
        table_service = pool.FindServiceByName("bete.v1.TableService")
        methods = {m.name for m in table_service.methods}
        assert {"SubmitAction", "WatchBot", "WatchTable", "GetSeatView"} <= methods
        watch = table_service.methods_by_name["WatchBot"]
        assert watch.output_type.full_name == "bete.v1.WatchBotResponse"
        assert pool.FindMessageTypeByName("bete.v1.SeatView").fields_by_name["legal_actions"].message_type.full_name \
            == "bete.v1.Action"


def test_health_reports_serving(server):
    with grpc.insecure_channel(server) as channel:
        resp = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert resp.status == health_pb2.HealthCheckResponse.SERVING
